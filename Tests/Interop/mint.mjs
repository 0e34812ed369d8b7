// Node side of the TesseraTokens interoperability tests: mints an HS256 identity token with
// nothing but Node's built-in crypto module, as a backend without a JWT library would.
//   node mint.mjs SECRET KID SUB AUD EXP
import { createHmac } from "node:crypto";

const [secret, kid, sub, aud, exp] = process.argv.slice(2);
const encode = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
const input = `${encode({ alg: "HS256", typ: "JWT", kid })}.${encode({ sub, aud, exp: Number(exp), displayName: "Node" })}`;
const signature = createHmac("sha256", secret).update(input).digest("base64url");
process.stdout.write(`${input}.${signature}\n`);
