// Mints a Tessera identity token (HS256) with Node's built-in crypto: no npm packages.
//
//   import { mintIdentityToken } from "./mint.mjs";
//   const token = mintIdentityToken({ secret, kid, projectId, sub: user.id, email: user.email });
//
// Run it as a script to print a token:  node mint.mjs SUB   (TESSERA_IDENTITY_SECRET,
// TESSERA_IDENTITY_KID and TESSERA_PROJECT_ID in the environment).
import { createHmac, randomUUID } from "node:crypto";

const base64url = (value) => Buffer.from(value).toString("base64url");

export function mintIdentityToken({ secret, kid, projectId, sub, ttlSeconds = 60, name, email, avatarUrl }) {
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: "HS256", typ: "JWT", ...(kid ? { kid } : {}) };
  const claims = {
    sub, // your user's stable ID
    aud: projectId, // the project ID (or slug): a token for one project is refused by another
    iat: now,
    exp: now + ttlSeconds, // short-lived: it is exchanged at once
    jti: randomUUID(), // single use: a replayed token is refused
    ...(name ? { name } : {}),
    ...(email ? { email } : {}),
    ...(avatarUrl ? { avatar_url: avatarUrl } : {}),
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  // The HMAC key is the UTF-8 bytes of the whole secret string, exactly as the server shows it.
  const signature = createHmac("sha256", Buffer.from(secret, "utf8")).update(input).digest("base64url");
  return `${input}.${signature}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { TESSERA_IDENTITY_SECRET, TESSERA_IDENTITY_KID, TESSERA_PROJECT_ID } = process.env;
  console.log(
    mintIdentityToken({
      secret: TESSERA_IDENTITY_SECRET,
      kid: TESSERA_IDENTITY_KID,
      projectId: TESSERA_PROJECT_ID,
      sub: process.argv[2],
      email: process.argv[3],
    }),
  );
}
