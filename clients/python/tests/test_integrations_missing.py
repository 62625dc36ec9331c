"""The integrations are optional: importing the package imports no framework, and importing an
integration whose framework is missing says which extra to install (here on the standard library's
Python, where the framework is made unimportable in a child process whatever is installed)."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from support import PACKAGE_ROOT


def python(code: str, cwd: str = PACKAGE_ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True)


class MissingExtraTest(unittest.TestCase):
    def test_the_package_imports_no_framework(self) -> None:
        done = python(
            """
            import sys, knowhub, knowhub.tools, knowhub.integrations
            loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("langgraph", "langchain", "langchain_core", "pydantic"))
            print(loaded)
            """
        )
        self.assertEqual((done.returncode, done.stdout.strip()), (0, "[]"), done.stderr)

    def test_a_missing_framework_names_the_extra(self) -> None:
        for module, framework, extra in [("langgraph", "langgraph", "langgraph"), ("langchain", "langchain_core", "langchain")]:
            with self.subTest(module=module):
                done = python(
                    f"""
                    import sys
                    sys.modules["{framework}"] = None  # as if not installed
                    try:
                        import knowhub.integrations.{module}
                    except ModuleNotFoundError as error:
                        print(type(error).__name__, error.name, "|", error)
                    """
                )
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertEqual(
                    done.stdout.strip(),
                    f"ModuleNotFoundError {framework} | knowhub.integrations.{module} needs the {framework} package, which is not installed: "
                    f"pip install 'knowhub[{extra}]' (or pip install {framework})",
                )

    def test_a_framework_broken_for_its_own_reason_keeps_its_error(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "brokenfw.py"), "w", encoding="utf-8") as f:
                f.write("import not_a_module_anywhere_xyz\n")
            done = python(
                """
                import sys
                sys.path.insert(0, ".")
                from knowhub.integrations._require import require
                try:
                    require("brokenfw", "brokenfw", "brokenfw")
                except ModuleNotFoundError as error:
                    print(error.name)
                """,
                cwd=folder,
            )
        self.assertEqual((done.returncode, done.stdout.strip()), (0, "not_a_module_anywhere_xyz"), done.stderr)


if __name__ == "__main__":
    unittest.main()
