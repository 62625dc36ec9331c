/**
 * Real-looking credentials of every kind issue 27 lists, made fresh each run (so no rule can
 * match a fixed example string): the detector's unit test and the end-to-end test share them.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto'

/** A fresh value each run, so no rule can match a fixed example string. */
export const b64 = (bytes: number): string => randomBytes(bytes).toString('base64')
export const alnum = (n: number, alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'): string =>
  Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length]).join('')
/** A 40-character AWS secret access key with both cases and a digit. */
export const awsSecret = (): string => `${alnum(18)}/${alnum(20)}A1`.slice(0, 40)
const pem = (): string => generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
const jwt = (): string =>
  [
    Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url'),
    Buffer.from(`{"sub":"${alnum(8)}","iat":1700000000}`).toString('base64url'),
    randomBytes(32).toString('base64url'),
  ].join('.')

/** One kind: the text, the secret values in it, and what must stay. */
export interface SecretCase {
  kind: string
  text: string
  secrets: string[]
  keep: string[]
}

/**
 * Real-looking credentials of each kind issue 27 lists (also used by the end-to-end test).
 * @example
 * for (const c of secretCases()) expect((await redactSecrets(c.text)).text).not.toContain(c.secrets[0])
 */
export function secretCases(): SecretCase[] {
  const kh = `kh_${randomBytes(32).toString('base64url')}`
  const akid = `AKIA${alnum(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`
  const aws = awsSecret()
  const aws2 = awsSecret()
  const gcpKey = `AIza${alnum(35, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-')}`
  const gcpPem = pem()
  const gcpJson = JSON.stringify({ type: 'service_account', project_id: 'shop-prod', private_key_id: randomBytes(20).toString('hex'), private_key: gcpPem })
  const azureKey = b64(64)
  const azureSig = encodeURIComponent(b64(32))
  const dbPass = `Pg${alnum(12)}9`
  const mongoPass = `Mo${alnum(10)}7`
  const mysqlPass = 'Passw0rd'
  const key = pem()
  const token = jwt()
  const envSecret = `sk_live_${alnum(24)}`
  const envPlain = alnum(32)
  const session = randomBytes(16).toString('hex')
  const csrf = alnum(24)
  const setCookie = b64(18)
  const bearer = alnum(40)
  const basic = Buffer.from(`deploy:${alnum(12)}`).toString('base64')
  return [
    {
      kind: 'KnowHub token',
      text: `Use this token for the hub: ${kh} (it is a live one)`,
      secrets: [kh],
      keep: ['Use this token for the hub:', '(it is a live one)'],
    },
    {
      kind: 'AWS access key id and secret access key',
      text: `aws_access_key_id = ${akid}\naws_secret_access_key = ${aws}\nand in prose: the AWS secret access key is ${aws2}`,
      secrets: [akid, aws, aws2],
      keep: ['aws_access_key_id', 'aws_secret_access_key', 'and in prose'],
    },
    { kind: 'GCP API key', text: `curl "https://maps.googleapis.com/maps/api/geocode/json?key=${gcpKey}"`, secrets: [gcpKey], keep: ['maps.googleapis.com'] },
    {
      kind: 'GCP service-account key (JSON inside a message)',
      text: `Here is the service account file: ${gcpJson}`,
      secrets: [gcpPem.split('\n')[2]!, JSON.parse(gcpJson).private_key_id as string],
      keep: ['service_account', 'shop-prod'],
    },
    {
      kind: 'Azure storage connection string and SAS',
      text: `DefaultEndpointsProtocol=https;AccountName=shopfiles;AccountKey=${azureKey};EndpointSuffix=core.windows.net\nhttps://shopfiles.blob.core.windows.net/c/x.csv?sv=2022-11-02&sp=r&sig=${azureSig}`,
      secrets: [azureKey, azureSig],
      keep: ['AccountName=shopfiles', 'EndpointSuffix=core.windows.net', 'sv=2022-11-02'],
    },
    {
      kind: 'database URLs with passwords',
      text: `DATABASE_URL is postgres://app:${dbPass}@db.internal:5432/shop and mongo is mongodb+srv://reporter:${mongoPass}@cluster0.mongodb.net/stats`,
      secrets: [dbPass, mongoPass],
      keep: ['db.internal:5432/shop', 'cluster0.mongodb.net', 'postgres://app:'],
    },
    {
      kind: 'mysql -p password',
      text: `then run mysql -u root -p${mysqlPass} -h 10.1.2.3 shop < dump.sql`,
      secrets: [mysqlPass],
      keep: ['mysql -u root -p', '-h 10.1.2.3 shop < dump.sql'],
    },
    { kind: 'JWT', text: `the API answered with id_token ${token} after login`, secrets: [token], keep: ['after login'] },
    {
      kind: 'private key (PEM)',
      text: `deploy key:\n${key}\nadd it to ~/.ssh`,
      secrets: [key.split('\n')[1]!, key.split('\n')[5]!],
      keep: ['deploy key:', 'add it to ~/.ssh'],
    },
    {
      kind: '.env lines',
      text: `NODE_ENV=production\nSTRIPE_SECRET_KEY=${envSecret}\nexport SIGNING=${envPlain}\nPORT=8080`,
      secrets: [envSecret, envPlain],
      keep: ['NODE_ENV=production', 'STRIPE_SECRET_KEY=', 'PORT=8080'],
    },
    {
      kind: 'cookies (values only)',
      text: `Cookie: sessionid=${session}; csrftoken=${csrf}; theme=dark\nSet-Cookie: auth=${setCookie}; Path=/; HttpOnly; Secure; SameSite=Lax`,
      secrets: [session, csrf, setCookie],
      keep: ['Cookie: sessionid=', '; csrftoken=', 'Set-Cookie: auth=', '; Path=/; HttpOnly; Secure; SameSite=Lax'],
    },
    {
      kind: 'bearer and basic Authorization headers',
      text: `curl -H "Authorization: Bearer ${bearer}" https://api.example.com/v1/orders\nAuthorization: Basic ${basic}`,
      secrets: [bearer, basic],
      keep: ['curl -H "Authorization: Bearer ', 'https://api.example.com/v1/orders'],
    },
  ]
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
const LOWER = 'abcdefghijklmnopqrstuvwxyz'
const DIGITS = '0123456789'
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
const BASE64URL = `${UPPER}${LOWER}${DIGITS}_-`
/** A password as people pick them: a capital, letters, digits, a symbol. */
const password = (): string => `${alnum(1, UPPER)}${alnum(7, LOWER)}${alnum(2, DIGITS)}${alnum(1, '!#%&*+.@^')}${alnum(2, DIGITS)}`
/** A Telegram bot token: the bot's id, a colon, 35 characters (AA…). */
const telegramToken = (): string => `${alnum(10, DIGITS).replace(/^0/u, '7')}:AA${alnum(33, BASE64URL)}`
/** A TOTP seed in base32. */
const seed = (n: number): string => alnum(n, BASE32)

/** One secret form of the corpus: the text as a person or a tool writes it, and the secret values in it. */
export interface SecretForm {
  lang: 'en' | 'zh'
  kind: string
  text: string
  secrets: string[]
}

/** A form with one secret: `make(value)` writes the text. */
const form = (lang: 'en' | 'zh', kind: string, value: string, make: (v: string) => string): SecretForm => ({ lang, kind, text: make(value), secrets: [value] })

/**
 * The redaction corpus of issue 39: at least 60 forms of secrets as they appear in conversations
 * (English and Chinese), fresh values each run. Each form's values must never reach a model.
 * @example
 * for (const f of secretForms()) expect((await redactSecrets(f.text)).text).not.toContain(f.secrets[0])
 */
export function secretForms(): SecretForm[] {
  for (;;) {
    const forms = drawSecretForms()
    if (!forms.some((f) => valueElsewhere(f, forms))) return forms
  }
}

/**
 * Whether one of the form's values also occurs in another form's text or in a harmless form: the
 * random digits of another value can spell a 4-digit PIN (about 1 corpus in 150), and then a test
 * could not tell a leak of the value from the other text reaching the model as it should.
 */
function valueElsewhere(form: SecretForm, forms: readonly SecretForm[]): boolean {
  const others = [...forms.filter((f) => f !== form).map((f) => f.text), ...harmlessForms().map((h) => h.text)]
  return form.secrets.some((v) => others.some((text) => text.includes(v)))
}

/** One draw of the corpus's secret forms, fresh values each time. */
function drawSecretForms(): SecretForm[] {
  const p = password
  const spaced = seed(32).match(/.{4}/gu)!.join(' ')
  const en: SecretForm[] = [
    form('en', 'curl -u', p(), (v) => `curl -u admin:${v} https://api.example.com/v1/orders`),
    form('en', 'curl --user', p(), (v) => `curl --user deploy:${v} -X POST https://ci.example.com/job/build`),
    form('en', 'curl -u quoted', p(), (v) => `curl -s -u 'backup:${v}' https://files.example.com/dump.tar`),
    form('en', 'export mid-line', p(), (v) => `Run: export PGPASSWORD=${v}`),
    form('en', 'export quoted mid-sentence', p(), (v) => `Then export DB_PASSWORD="${v}" and restart the app`),
    form('en', 'inline env before a command', p(), (v) => `PGPASSWORD=${v} psql -h db.internal -U app shop`),
    form('en', 'Dockerfile ENV', alnum(36), (v) => `In the Dockerfile: ENV GITHUB_TOKEN=${v}`),
    form('en', 'Windows set', p(), (v) => `On Windows: set MYSQL_PWD=${v} && mysql -u root`),
    form('en', 'PowerShell $env:', alnum(32), (v) => `PowerShell: $env:API_KEY="${v}"`),
    form('en', 'heroku config:set', randomBytes(32).toString('hex'), (v) => `heroku config:set SECRET_KEY_BASE=${v}`),
    form('en', 'password for X is', p(), (v) => `the prod db password for admin is ${v}`),
    form('en', 'password for the X is', p(), (v) => `The password for the VPN is ${v}`),
    form('en', 'password for an address is', p(), (v) => `smtp password for noreply@shop.example is ${v}`),
    form('en', 'password of X:', p(), (v) => `password of the root account: ${v}`),
    form('en', 'my password is', p(), (v) => `my password is ${v}`),
    form('en', 'wifi password is', p(), (v) => `The wifi password is ${v}`),
    form('en', 'password was', p(), (v) => `sudo password was ${v} on the old box`),
    form('en', 'PIN is', alnum(4, DIGITS), (v) => `my debit card PIN is ${v}`),
    form('en', 'PIN code:', alnum(6, DIGITS), (v) => `PIN code: ${v}`),
    form('en', 'Telegram bot token', telegramToken(), (v) => `bot token ${v}`),
    form('en', 'Telegram bot URL', telegramToken(), (v) => `https://api.telegram.org/bot${v}/sendMessage?chat_id=12345`),
    form('en', 'Telegram .env', telegramToken(), (v) => `TELEGRAM_BOT_TOKEN=${v}`),
    form('en', 'otpauth TOTP URI', seed(32), (v) => `Scan this: otpauth://totp/Acme:alice@acme.com?secret=${v}&issuer=Acme`),
    form('en', 'otpauth HOTP URI', seed(16), (v) => `otpauth://hotp/GitHub:bob?secret=${v}&counter=0`),
    form('en', 'TOTP secret in groups', spaced, (v) => `TOTP secret: ${v}`),
    form('en', '2FA setup key', seed(32), (v) => `the 2FA setup key is ${v}`),
    form('en', 'mysql -p', p(), (v) => `mysql -u root -p${v} shop`),
    form('en', 'redis-cli -a', p(), (v) => `redis-cli -h cache.internal -a ${v} ping`),
    form('en', 'docker login -p', p(), (v) => `docker login -u ci -p ${v} registry.example.com`),
    form('en', 'netrc', p(), (v) => `machine api.example.com login bob password ${v}`),
    form('en', 'git URL', alnum(14), (v) => `git clone https://alice:${v}9@git.example.com/shop.git`),
    form('en', 'wget --password', p(), (v) => `wget --user=ops --password=${v} https://files.example.com/x`),
    form('en', 'sshpass', p(), (v) => `sshpass -p ${v} ssh ops@10.0.0.5`),
    form('en', 'JSON password', p(), (v) => `{"user": "ops", "password": "${v}"}`),
    form('en', 'YAML password', p(), (v) => `db:\n  user: shop\n  password: ${v}`),
    form('en', 'Bearer header', alnum(40), (v) => `Authorization: Bearer ${v}`),
    form('en', 'X-Api-Key header', alnum(32), (v) => `X-Api-Key: ${v}`),
    form('en', 'the api key is', alnum(32), (v) => `the api key is ${v}`),
    form('en', 'token=', alnum(24), (v) => `use token=${v} for the webhook`),
    form('en', 'kubectl from-literal', p(), (v) => `kubectl create secret generic db --from-literal=password=${v}`),
    form('en', 'credentials user:pass', p(), (v) => `credentials: ops:${v}`),
    form('en', 'Stripe key', `sk_live_${alnum(24)}`, (v) => `Stripe key ${v}`),
    form('en', 'passphrase is', `${alnum(6, LOWER)}-${alnum(5, LOWER)}-${alnum(7, LOWER)}-${alnum(2, DIGITS)}`, (v) => `The passphrase is ${v}`),
    form('en', 'root password:', p(), (v) => `root password: ${v}`),
    form('en', 'pwd=', p(), (v) => `admin pwd=${v}`),
  ]
  const zh: SecretForm[] = [
    form('zh', '银行卡密码 (adjacent)', alnum(6, DIGITS), (v) => `我的银行卡密码 ${v}`),
    form('zh', '密码是', p(), (v) => `数据库密码是 ${v}`),
    form('zh', '密码：', p(), (v) => `服务器 root 密码：${v}`),
    form('zh', '密码为 (no space)', p(), (v) => `管理员密码为${v}，请妥善保管`),
    form('zh', 'wifi 密码 (adjacent)', p(), (v) => `wifi 密码 ${v}`),
    form('zh', '支付密码 (adjacent)', alnum(6, DIGITS), (v) => `支付密码 ${v}`),
    form('zh', '邮箱授权码', alnum(16, LOWER), (v) => `邮箱授权码 ${v}`),
    form('zh', 'API 密钥：', alnum(32), (v) => `API 密钥：${v}`),
    form('zh', 'AccessKey Secret：', alnum(30), (v) => `阿里云 AccessKey Secret：${v}`),
    form('zh', 'export 句中', p(), (v) => `先运行 export PGPASSWORD=${v} 再连接数据库`),
    form('zh', 'curl -u 句中', p(), (v) => `用 curl -u admin:${v} 调用接口`),
    form('zh', '机器人 token 是', telegramToken(), (v) => `机器人 token 是 ${v}`),
    form('zh', '二次验证密钥', seed(16), (v) => `二次验证密钥：${v}`),
    form('zh', '谷歌验证器 otpauth', seed(32), (v) => `谷歌验证器：otpauth://totp/Shop:ops?secret=${v}&issuer=Shop`),
    form('zh', '口令：', p(), (v) => `口令：${v}`),
    form('zh', '私钥密码是', p(), (v) => `私钥密码是 ${v}`),
    form('zh', '连接串', p(), (v) => `连接串 postgres://app:${v}@db.internal:5432/shop`),
    form('zh', '令牌：', alnum(32), (v) => `令牌：${v}`),
    form('zh', '的密码是 (no space)', p(), (v) => `VPN 的密码是${v}`),
    form('zh', '账号，密码 (adjacent)', p(), (v) => `测试账号 admin，密码 ${v}`),
  ]
  return [...en, ...zh]
}

/** One harmless look-alike: it reads like a secret form, holds none, and must reach the model as written. */
export interface HarmlessForm {
  lang: 'en' | 'zh'
  text: string
}

/**
 * Harmless look-alikes of the corpus's secret forms (issue 39): placeholders, settings about
 * secrets, prose about passwords and tokens, ports and ids. At most 5% of them may be redacted.
 * @example
 * const changed = harmlessForms().filter(async (h) => (await redactSecrets(h.text)).text !== h.text)
 */
export function harmlessForms(): HarmlessForm[] {
  const en = [
    'curl -u $USER:$API_TOKEN https://api.example.com',
    'curl -u, --user <user:password>  Server user and password',
    "curl -X POST -H 'Content-Type: application/json' https://api.example.com/v1/items",
    "curl --user-agent 'Mozilla/5.0' https://example.com",
    'curl -u admin https://api.example.com (curl then asks for the password)',
    'export PATH=$PATH:/usr/local/bin',
    'Run: export NODE_ENV=production',
    'export PGHOST=db.internal and export PGPORT=5432',
    'export PGPASSWORD=$(cat ~/.pgpass-shop)',
    'export TOKEN_TTL=3600',
    'set PASSWORD_MIN_LENGTH=12 in the config',
    'ENV SESSION_TIMEOUT=1800',
    'DB_PASSWORD_FILE=/run/secrets/db_password',
    'export SSH_AUTH_SOCK=/tmp/ssh-agent.sock',
    'the password is required',
    'the password for admin is stored in Vault',
    'The password for the staging database is in 1Password.',
    'your password is too short: use at least 12 characters',
    'password: string (required)',
    'the password was reset yesterday',
    'Password is case-sensitive.',
    'The PIN is four digits long.',
    'Connect the LED to PIN 13 on the board',
    'Telegram: message @knowhub_bot or open t.me/knowhub_bot',
    'Call https://api.telegram.org/bot<token>/getMe to check the bot',
    'chat_id -1001234567890 is the ops group',
    'the ratio was 123456789:1 in the benchmark',
    'otpauth:// URIs hold the secret; scan them with the authenticator app',
    'otpauth://totp/Acme:alice?issuer=Acme&digits=6&period=30',
    'Enable 2FA in Settings, then scan the QR code',
    'The TOTP secret is shown once, store it in the vault',
    'mysql -u root -p (it prompts for the password)',
    'ssh -p 2222 deploy@10.0.0.5',
    'docker run -p 8080:80 nginx',
    'docker login registry.example.com (credentials come from the helper)',
    'redis-cli -h cache.internal ping',
    'git clone https://git.example.com/shop.git',
    'Authorization: Bearer <token>',
    'Bearer tokens go in the Authorization header',
    'password: ${DB_PASSWORD}',
    'The token is valid for two hours.',
    'The secret is out: we ship on Friday.',
    'api_key is optional in local mode',
    'commit 4e8ace3b1f0d9c8e7a6b5c4d3e2f1a0b9c8d7e6f fixed the login bug',
    'Entry knowledge-20260101120000-abcd merged into knowledge-20260102120000-efgh.',
    'uuid 123e4567-e89b-12d3-a456-426614174000',
    'AWS_REGION=us-east-1 aws s3 ls s3://shop-assets',
    'kubectl create secret generic db --from-file=./db.env',
    'machine learning login flow: password reset by email',
    'Meeting at 10:30: password reset flow discussed',
    'the session is 30 minutes long',
    'credentials are in the team vault',
    'Set the KEY column as the primary key',
    'pass the token to the next step',
    'PIN: see the sealed envelope',
  ]
  const zh = [
    '密码长度至少 12 位',
    '请输入密码',
    '密码错误，请重试',
    '密码是必填项',
    '密码 8-16 位，需包含字母和数字',
    '密码：请联系管理员获取',
    '密码：******',
    '忘记密码？点击重置',
    'token 的有效期为 2 小时',
    '令牌 token 会在 24 小时后过期',
    '授权码模式是 OAuth 2.0 的一种授权流程',
    '私钥文件路径：/etc/ssl/private/server.key',
    '密钥管理服务 KMS 负责轮换',
    '二次验证已开启',
    '用 curl -X GET 查询订单',
    '运行 export NODE_ENV=production 再启动',
    '机器人的用户名是 @knowhub_bot',
    '密码 12 位以上更安全',
    '验证码已发送到手机',
    '数据库密码存放在 Vault 里',
  ]
  return [...en.map((text) => ({ lang: 'en' as const, text })), ...zh.map((text) => ({ lang: 'zh' as const, text }))]
}
