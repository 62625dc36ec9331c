"""KnowHub where agents are built: optional integrations, each in its own module and each needing its
framework, installed with the package's extra of the same name.

- :mod:`knowhub.integrations.langgraph`: ``KnowHubStore``, a LangGraph ``BaseStore`` (``pip install 'knowhub[langgraph]'``);
- :mod:`knowhub.integrations.langchain`: the seed-003 tools as LangChain ``StructuredTool`` s and
  ``KnowHubRetriever`` (``pip install 'knowhub[langchain]'``).

Importing this package imports no framework; importing a module whose framework is missing raises
an ``ImportError`` naming the extra to install. See docs/integrations.md.
"""
