// Verifies a request of a session bound to a device key (RFC 9449 DPoP) with Node's built-in
// crypto: `Authorization: DPoP <session JWT>` and `DPoP: <proof>`. No npm packages.
//
//   import { createSessionVerifier } from "./verify.mjs";
//   import { verifyBoundRequest } from "./dpop.mjs";
//   const { claims, jti } = await verifyBoundRequest(verifier, {
//     method: req.method, url: `https://api.example.com${req.path}`, // your public URL, no query
//     authorization: req.headers.authorization, dpop: req.headers.dpop,
//   });
//
// Run it as a script:  node dpop.mjs METHOD URL AUTHORIZATION PROOF [KIND…]   (TESSERA_URL and
// TESSERA_PROJECT_ID in the environment); prints the claims, or the reason and exits 1.
import { createHash, createPublicKey, verify as verifySignature } from "node:crypto";
import { createSessionVerifier } from "./verify.mjs";

const sha256 = (text) => createHash("sha256").update(text).digest("base64url");
const part = (text) => JSON.parse(Buffer.from(text, "base64url"));

// RFC 7638: SHA-256 of the key's required members in lexicographic order, no whitespace.
export const thumbprint = ({ crv, kty, x, y }) => sha256(JSON.stringify({ crv, kty, x, y }));

export function verifyProof(proof, { method, url, accessToken, skewSeconds = 60, now = Date.now() / 1000 }) {
  const parts = String(proof).split(".");
  if (parts.length !== 3) throw new Error("the proof is not a compact JWS");
  const header = part(parts[0]);
  const { jwk } = header;
  if (header.typ !== "dpop+jwt" || header.alg !== "ES256") throw new Error("not an ES256 DPoP proof");
  if (jwk?.kty !== "EC" || jwk.crv !== "P-256" || "d" in jwk) throw new Error("jwk is not a P-256 public key");
  const key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y }, format: "jwk" });
  const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
  const signature = Buffer.from(parts[2], "base64url");
  if (!verifySignature("sha256", signed, { key, dsaEncoding: "ieee-p1363" }, signature)) throw new Error("bad proof signature");
  const claims = part(parts[1]);
  if (claims.htm !== method) throw new Error("htm is not this request's method");
  if (claims.htu !== url.split(/[?#]/)[0]) throw new Error("htu is not this request's URL");
  if (!(Math.abs(now - claims.iat) <= skewSeconds)) throw new Error("iat is too far from now");
  if (typeof claims.jti !== "string" || !claims.jti) throw new Error("no jti");
  if (claims.ath !== sha256(accessToken)) throw new Error("ath is not this session JWT's");
  return { jkt: thumbprint(jwk), jti: claims.jti };
}

export async function verifyBoundRequest(verifier, { method, url, authorization, dpop, kinds }) {
  const [scheme, token] = String(authorization).split(" ");
  if (scheme?.toLowerCase() !== "dpop" || !token || !dpop) throw new Error("not a DPoP request");
  const proof = verifyProof(dpop, { method, url, accessToken: token });
  const claims = await verifier.verify(token, { kinds });
  if (claims.cnf?.jkt !== proof.jkt) throw new Error("the session is bound to another key (or to none)");
  // Keep jti for two minutes and refuse it again on requests that change something.
  return { claims, jti: proof.jti };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const verifier = createSessionVerifier({ baseUrl: process.env.TESSERA_URL, projectId: process.env.TESSERA_PROJECT_ID });
  const [method, url, authorization, dpop, ...kinds] = process.argv.slice(2);
  try {
    const { claims } = await verifyBoundRequest(verifier, { method, url, authorization, dpop, kinds: kinds.length ? kinds : ["verified"] });
    console.log(JSON.stringify(claims));
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
