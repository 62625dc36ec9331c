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
