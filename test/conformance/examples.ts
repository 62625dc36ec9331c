/**
 * The design documents' own examples (../shared/spec/), copied as written: records, requests and
 * layouts. The conformance suite (seeds.test.ts) loads each through every path and checks that it
 * behaves as the documents say. Nothing here is edited to suit KnowHub: where KnowHub differs on
 * purpose, docs/seeds.md says where and why.
 */

/** Seed 002, 用户画像特殊处理 → 示例: a user profile entry (`type`, `visibility`, an `eval` of three fields). */
export const SEED_002_PROFILE = `{
"id": "profile_001",
"type": "user_profile",
"task": "用户编码风格偏好",
"tags": {
"category": "preference",
"domain": "coding_style"
},
"scopes": ["user:123", "project:456"],
"owner": "user:123",
"visibility": "shared",
"content": "用户偏好使用 TypeScript 而非 JavaScript,注重类型安全",
"source": {
"agent_id": "general_assistant",
"trace_id": "trace-xxx",
"timestamp": "2026-03-03"
},
"eval": {
"helpful": 5,
"harmful": 0,
"confidence": 0.9
}
}`

/** Seed 002, 文件系统结构: the folder layout (the comments are the seed's). */
export const SEED_002_LAYOUT = `/workspace/knowledge/
├── global/ # 全局知识
│ ├── tools.json
│ ├── definitions.json
│ └── plans.json
│
├── agents/ # Agent 经验
│ ├── general_assistant/
│ ├── crawler_ops/
│ └── ...
│
└── users/ # 用户画像
├── user_123/
│ ├── profile.json # 基础信息
│ ├── preferences.json # 偏好
│ ├── habits.json # 习惯
│ └── constraints.json # 约束
└── ...`

/** Seed 002, 检索流程 → 3. 按优先级排序. */
export const SEED_002_PRIORITY = 'user > project > agent > team > org > public'

/** Seed 003, 知识结构: the full knowledge record. */
export const SEED_003_RECORD = `{
  "id": "knowledge-20260305-a1b2",
  "message_id": "msg-xxx",
  "types": ["strategy", "tool"],
  "task": "在什么场景下要完成什么目标",
  "tags": {
    "category": "preference",
    "domain": "coding_style"
  },
  "scopes": ["org:cybertogether"],
  "owner": "agent:research_agent",
  "content": "核心知识内容",
  "resource_ids": ["code/selenium/login", "credentials/website_a"],
  "source": {
    "name": "资源名称",
    "category": "exp",
    "urls": ["https://example.com"],
    "agent_id": "research_agent",
    "submitted_by": "user@example.com",
    "timestamp": "2026-03-05T12:00:00Z",
    "message_id": "msg-xxx"
  },
  "eval": {
    "score": 4,
    "helpful": 5,
    "harmful": 0,
    "confidence": 0.9,
    "helpful_history": [],
    "harmful_history": []
  },
  "created_at": "2026-03-05T12:00:00Z",
  "updated_at": "2026-03-05T12:00:00Z"
}`

/** Seed 003, POST /api/knowledge → 请求体. */
export const SEED_003_SAVE_BODY = `{
  "task": "在什么场景下要完成什么目标",
  "content": "核心知识内容",
  "types": ["tool", "strategy"],
  "tags": {"category": "preference", "domain": "coding_style"},
  "scopes": ["org:cybertogether"],
  "owner": "agent:research_agent",
  "source": {
    "name": "资源名称",
    "category": "exp",
    "urls": ["https://example.com"],
    "agent_id": "research_agent",
    "submitted_by": "user@example.com",
    "message_id": "msg-xxx"
  },
  "score": 4
}`

/** Seed 003, PUT /api/knowledge/{id} → 请求体. */
export const SEED_003_UPDATE_BODY = `{
  "add_helpful_case": {
    "task": "任务描述",
    "outcome": "成功",
    "timestamp": "2026-03-05T12:00:00Z"
  },
  "add_harmful_case": {
    "task": "任务描述",
    "outcome": "失败",
    "reason": "原因",
    "timestamp": "2026-03-05T12:00:00Z"
  },
  "update_score": 4,
  "evolve_feedback": "改进建议(触发知识进化)"
}`

/** Seed 003, POST /api/knowledge/batch_update → 请求体 (its `knowledge-xxx` is a placeholder for a real id). */
export const SEED_003_BATCH_BODY = `{
  "feedback_list": [
    {
      "knowledge_id": "knowledge-xxx",
      "is_helpful": true,
      "case": {
        "task": "任务描述",
        "outcome": "成功",
        "timestamp": "2026-03-05T12:00:00Z"
      }
    }
  ]
}`

/** Seed 003, POST /api/knowledge/slim → 请求体. */
export const SEED_003_SLIM_BODY = `{
  "model": "google/gemini-2.0-flash-001"
}`

/** Seed 003, GET /api/knowledge/search → 响应 (its values are a sample; the shape is the contract). */
export const SEED_003_SEARCH_RESPONSE = `{
  "results": [
    {
      "id": "knowledge-xxx",
      "task": "...",
      "content": "...",
      "types": ["strategy", "tool"],
      "tags": {"category": "preference"},
      "eval": {
        "score": 4,
        "helpful": 2,
        "harmful": 0,
        "confidence": 0.9
      },
      "quality_score": 5.0
    }
  ],
  "count": 3
}`

/** Seed 003, Resource 引用机制 → 场景 1: a knowledge entry that references code. */
export const SEED_003_CODE_KNOWLEDGE = `{
  "task": "使用 Selenium 登录某网站并绕过反爬检测",
  "content": "使用 undetected_chromedriver 可以绕过大部分检测。关键点:1) 设置合适的 user-agent 2) 随机延迟 3) 避免频繁请求",
  "types": ["tool", "strategy"],
  "resource_ids": ["code/selenium/undetected_login"]
}`

/** Seed 003, 场景 1: the code resource. */
export const SEED_003_CODE_RESOURCE = `{
  "id": "code/selenium/undetected_login",
  "title": "Selenium 绕过检测登录代码",
  "body": "import undetected_chromedriver as uc\\n\\ndriver = uc.Chrome()...",
  "content_type": "code",
  "metadata": {"language": "python"}
}`

/** Seed 003, 场景 2: a credential resource (its secret in `secure_body`). */
export const SEED_003_CREDENTIAL_RESOURCE = `{
  "id": "credentials/website_a",
  "title": "某网站测试账号",
  "body": "使用方法:直接登录即可,每天限额 100 次",
  "secure_body": "账号:user@example.com\\n密码:SecurePass123",
  "content_type": "credential",
  "metadata": {"acquired_at": "2026-03-06T10:00:00Z"}
}`

/** Seed 003, 场景 3: a cookie resource with `expires_at`. */
export const SEED_003_COOKIE_RESOURCE = `{
  "id": "cookies/website_a",
  "title": "某网站 Cookie",
  "body": "适用于:已登录状态的 API 调用",
  "secure_body": "session_id=abc123; auth_token=xyz789",
  "content_type": "cookie",
  "metadata": {
    "acquired_at": "2026-03-06T10:00:00Z",
    "expires_at": "2026-03-07T10:00:00Z"
  }
}`

/** Seed 003, 场景 4: one entry referencing code and a credential. */
export const SEED_003_MULTI_KNOWLEDGE = `{
  "task": "使用 Selenium 登录某网站",
  "content": "使用 undetected_chromedriver 绕过检测,配合测试账号登录",
  "types": ["tool", "usecase"],
  "resource_ids": ["code/selenium/undetected_login", "credentials/website_a"]
}`
