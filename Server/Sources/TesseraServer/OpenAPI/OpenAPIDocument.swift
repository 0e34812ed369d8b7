/// The server's OpenAPI 3.1 document, served verbatim at `GET /openapi.json`.
///
/// It describes exactly the wire contract of `docs/API.md`: every path and method, every request
/// body with its limits, every response including each error response with the shared error schema
/// and the error codes that operation can answer, `X-Request-Id` on every response, `Retry-After` on
/// 429, the four credentials as HTTP bearer security schemes, and links from each creating operation
/// to the `DELETE` that undoes it. It is maintained by hand (no code generator); `scripts/openapi-check`
/// validates it (strict JSON, OpenAPI 3.1, and a lint against the contract).
enum OpenAPIDocument {
    static let json: String = #"""
        {
          "openapi": "3.1.0",
          "info": {
            "title": "Tessera",
            "version": "1.0.0",
            "summary": "Self-hosted identity and sessions for apps.",
            "description": "The wire contract between the Tessera server, the Tessera client SDK and the app backends that mint identity tokens.\n\n- JSON in and out, `snake_case` members, times in RFC 3339 UTC with second precision; every session response carries `server_time`.\n- Request bodies are capped at 16 KiB (`413 payload_too_large`).\n- Every response carries `X-Request-Id`. Every non-2xx answer is `{\"error\": {\"code\", \"message\"}}`; bad input never produces a 5xx.\n- Credentials go in `Authorization: Bearer …` (the scheme word is case-insensitive; a credential in the query string is ignored). An endpoint answers `401 invalid_credentials` to a kind of credential it does not take.\n- A path that exists answers other methods with `405 method_not_allowed` and an `Allow` header; an unknown path is `404 not_found`.\n- `503 service_unavailable` means the database is not available; `500 internal_error` is a bug.\n- Every `/v1/*` response carries `Cache-Control: no-store` (errors included): answers hold credentials and personal data. The JWKS too: a rotated signing key signs at once, and a backend that meets its `kid` refetches the key set, which an HTTP cache must not answer with an old one; verifiers cache the keys in process.\n- Request bodies are read strictly: a body that is not RFC 8259 JSON in UTF-8, that names a member twice, whose strings hold a control character (C0, DEL, C1; raw or escaped) or an unpaired surrogate (`\\ud800`), or with a number out of its field's range, is `400 invalid_request` and changes nothing. Malformed HTTP/1 framing (a bad chunk size, a missing chunk CRLF, a body shorter than its `Content-Length`) and an HTTP/1.1 request without exactly one valid `Host` header (RFC 9112 §3.2) are `400 invalid_request` too, on any path.\n- Identifiers are compared as bytes and measured in Unicode scalars, never by canonical equivalence or grapheme clusters: `é` (U+00E9) and `e` + U+0301 are two different user IDs, and the 255 of a user ID are Unicode scalars (so at most 1020 UTF-8 bytes).\n- **The unverified mode** (`allow_unverified_identify`, the `user_id` form of identify) trusts the client: anyone holding the publishable key — which ships in the app binary — can assert any user ID. Its sessions (`kind: unverified`, `authenticated: false`, `verified: false`) are for personalisation, never authorization: they see and end only themselves (`GET /v1/sessions`, `DELETE /v1/sessions/{session_id}`), remove only the devices they registered, and their devices are listed with `verified_session: false`. Their profile is separate from the verified profile of the same user ID; a signed identity token for that user, sent from an unverified session, folds the unverified profile into the verified one (`merged`). An app backend that reads `external_id` from a session JWT must check its `kind` claim is `verified` (`SessionJWTVerifier(allowedKinds: [.verified])` in TesseraTokens).",
            "license": {
              "name": "Apache-2.0",
              "identifier": "Apache-2.0"
            }
          },
          "tags": [
            {
              "name": "Sessions",
              "description": "Anonymous start, identify, heartbeat, revoke, and the keys that verify session JWTs."
            },
            {
              "name": "Me",
              "description": "The caller's profile."
            },
            {
              "name": "Devices",
              "description": "Push tokens bound to sessions."
            },
            {
              "name": "Admin",
              "description": "The secret key's view of its own project."
            },
            {
              "name": "Operations",
              "description": "Health, metrics, this document."
            }
          ],
          "paths": {
            "/v1/sessions/anonymous": {
              "post": {
                "operationId": "startAnonymousSession",
                "summary": "Start or restore an installation's anonymous session",
                "tags": [
                  "Sessions"
                ],
                "description": "Creates, or restores, the anonymous identity of one app installation and opens a session for it: 201 for a new installation, 200 for a known one (idempotent). A known `installation_id` presented with another secret gets `409 installation_conflict`, so knowing someone's installation ID gives nothing.",
                "security": [
                  {
                    "publishableKey": []
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/AnonymousSessionRequest"
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "A known installation with its secret: its anonymous profile restored and a new session opened.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SessionEnvelope"
                        }
                      }
                    },
                    "links": {
                      "DeleteSession": {
                        "operationId": "deleteSession",
                        "parameters": {
                          "session_id": "$response.body#/session/id"
                        },
                        "description": "Ends the session this response opened (with a credential of the same profile)."
                      },
                      "GetProfile": {
                        "operationId": "getProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The session's profile, through the admin API."
                      },
                      "ListProfileSessions": {
                        "operationId": "listProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The profile's live sessions, through the admin API."
                      },
                      "ListProfileDevices": {
                        "operationId": "listProfileDevices",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The profile's live push tokens, through the admin API."
                      },
                      "RevokeProfileSessions": {
                        "operationId": "revokeProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Ends every session of the profile, through the admin API."
                      },
                      "EraseProfile": {
                        "operationId": "eraseProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Erases the profile, through the admin API."
                      }
                    }
                  },
                  "201": {
                    "description": "A new installation: its anonymous profile was created and a session opened.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SessionEnvelope"
                        }
                      }
                    },
                    "links": {
                      "DeleteSession": {
                        "operationId": "deleteSession",
                        "parameters": {
                          "session_id": "$response.body#/session/id"
                        },
                        "description": "Ends the session this response opened (with a credential of the same profile)."
                      },
                      "GetProfile": {
                        "operationId": "getProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The session's profile, through the admin API."
                      },
                      "ListProfileSessions": {
                        "operationId": "listProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The profile's live sessions, through the admin API."
                      },
                      "ListProfileDevices": {
                        "operationId": "listProfileDevices",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The profile's live push tokens, through the admin API."
                      },
                      "RevokeProfileSessions": {
                        "operationId": "revokeProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Ends every session of the profile, through the admin API."
                      },
                      "EraseProfile": {
                        "operationId": "eraseProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Erases the profile, through the admin API."
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidSessionRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "403": {
                    "$ref": "#/components/responses/ProfileBlocked"
                  },
                  "409": {
                    "$ref": "#/components/responses/InstallationConflict"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/projects/{project_id}/jwks.json": {
              "get": {
                "operationId": "getJWKS",
                "summary": "The public keys that verify session JWTs",
                "tags": [
                  "Sessions"
                ],
                "security": [],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProjectId"
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The project's session-JWT verification keys (JWK Set, RFC 7517), with `kid`; retired keys stay listed until their JWTs expire.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      },
                      "Cache-Control": {
                        "$ref": "#/components/headers/Cache-Control"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/JWKS"
                        }
                      }
                    }
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/sessions/identify": {
              "post": {
                "operationId": "identify",
                "summary": "Exchange an identity token (or a user ID) for an identified session",
                "tags": [
                  "Sessions"
                ],
                "description": "Signed form `{identity_token}`: verifies the token with the project's identity secrets (the project comes from the credential, never from the token) and yields a verified profile and session (`capabilities.authenticated = true`), creating or updating the profile from the token's claims; a token with `jti` is single-use until its `exp`. Client-asserted form `{user_id}`: only when the project allows it (`403 unverified_identify_disabled` otherwise); yields `verified = false`, `authenticated = false`. Called with an anonymous session, its profile is promoted or merged and that session ends; a promote also ends every other session of the anonymous profile (orphans of dropped answers, another tab) with their devices, so only the new session holds the identified profile. Called with an unverified session and a signed token for the same user ID, the unverified profile is folded into the verified one (`merge.outcome: merged`, `from_profile_id` the unverified profile, kept as an alias; the verified profile is created when missing). Called with a session of another identified user: `409 external_user_id_changed`. External IDs are compared byte for byte (no Unicode normalization).",
                "security": [
                  {
                    "publishableKey": []
                  },
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "oneOf": [
                          {
                            "$ref": "#/components/schemas/IdentifyWithToken"
                          },
                          {
                            "$ref": "#/components/schemas/IdentifyWithUserId"
                          }
                        ]
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The identified session: a new session, always (no session fixation). With a calling anonymous session, `merge` says what became of its profile, and that session has ended.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/IdentifyEnvelope"
                        }
                      }
                    },
                    "links": {
                      "DeleteSession": {
                        "operationId": "deleteSession",
                        "parameters": {
                          "session_id": "$response.body#/session/id"
                        },
                        "description": "Ends the session this response opened (with a credential of the same profile)."
                      },
                      "GetProfile": {
                        "operationId": "getProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The session's profile, through the admin API."
                      },
                      "ListProfileSessions": {
                        "operationId": "listProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The profile's live sessions, through the admin API."
                      },
                      "ListProfileDevices": {
                        "operationId": "listProfileDevices",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The profile's live push tokens, through the admin API."
                      },
                      "RevokeProfileSessions": {
                        "operationId": "revokeProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Ends every session of the profile, through the admin API."
                      },
                      "EraseProfile": {
                        "operationId": "eraseProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Erases the profile, through the admin API."
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/IdentifyBadRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/IdentifyUnauthorized"
                  },
                  "403": {
                    "$ref": "#/components/responses/IdentifyForbidden"
                  },
                  "409": {
                    "$ref": "#/components/responses/ExternalUserIdChanged"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/sessions/authenticate": {
              "post": {
                "operationId": "authenticate",
                "summary": "Check (heartbeat) or extend the calling session",
                "tags": [
                  "Sessions"
                ],
                "description": "Without a duration (or without a body) it only checks the session — the heartbeat — and returns a fresh session JWT. With `session_duration_minutes` it also extends: `expires_at = max(expires_at, now + duration)`, the duration capped by the project's maximum for the kind of session (the answer's `extension_capped` says whether it was). Extending needs the session token: a session JWT with a duration is `403 session_token_required` (a JWT travels to the app's backend, and must not keep its session alive for a year). A session JWT only checks and refreshes itself; one whose own `exp` has passed is accepted here while its signature is good and its session alive.",
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "requestBody": {
                  "required": false,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/AuthenticateRequest"
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The session is alive: its state and a fresh session JWT.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SessionEnvelope"
                        }
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidSessionRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "403": {
                    "description": "A duration was asked for with a session JWT as credential: extending needs the session token.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "allOf": [
                            {
                              "$ref": "#/components/schemas/Error"
                            },
                            {
                              "properties": {
                                "error": {
                                  "properties": {
                                    "code": {
                                      "enum": [
                                        "session_token_required"
                                      ]
                                    }
                                  }
                                }
                              }
                            }
                          ]
                        }
                      }
                    }
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/sessions/revoke": {
              "post": {
                "operationId": "revokeSession",
                "summary": "End the calling session",
                "tags": [
                  "Sessions"
                ],
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "responses": {
                  "204": {
                    "description": "The session ended at once, with every device token it registered.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/sessions": {
              "get": {
                "operationId": "listSessions",
                "summary": "The live sessions of the caller's profile",
                "tags": [
                  "Sessions"
                ],
                "description": "The live sessions of the caller's profile. An unverified session (`kind: unverified`) lists only itself: its user ID was only asserted by a client.",
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The live sessions.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SessionList"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/sessions/{session_id}": {
              "delete": {
                "operationId": "deleteSession",
                "summary": "End one of the caller's own sessions",
                "tags": [
                  "Sessions"
                ],
                "description": "Ends a live session of the caller's profile; anyone else's session, or one that is not alive, is a 404. An unverified session (`kind: unverified`) may end only itself: every other session is a 404.",
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/SessionId"
                  }
                ],
                "responses": {
                  "204": {
                    "description": "The session ended, with its device tokens.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/me": {
              "get": {
                "operationId": "getMe",
                "summary": "The caller's profile and capabilities",
                "tags": [
                  "Me"
                ],
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The profile and capabilities.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Me"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/devices": {
              "post": {
                "operationId": "registerDevice",
                "summary": "Register a push token for the calling session",
                "tags": [
                  "Devices"
                ],
                "description": "Binds the push token to the calling session. A token already bound elsewhere in the project moves to this session. A session that ends — revoke, expiry, identify, erasure — takes its device tokens with it.",
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/RegisterDeviceRequest"
                      }
                    }
                  }
                },
                "responses": {
                  "201": {
                    "description": "The device, bound to the calling session.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/DeviceEnvelope"
                        }
                      }
                    },
                    "links": {
                      "DeleteDevice": {
                        "operationId": "deleteDevice",
                        "parameters": {
                          "device_id": "$response.body#/device/id"
                        },
                        "description": "Unregisters this device."
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/devices/{device_id}": {
              "delete": {
                "operationId": "deleteDevice",
                "summary": "Unregister a device of the caller's profile",
                "tags": [
                  "Devices"
                ],
                "description": "Removes a device of the caller's profile; an unverified session (`kind: unverified`) removes only the devices it registered itself. Any other device is a 404.",
                "security": [
                  {
                    "sessionToken": []
                  },
                  {
                    "sessionJWT": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/DeviceId"
                  }
                ],
                "responses": {
                  "204": {
                    "description": "The device is gone.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles": {
              "get": {
                "operationId": "findProfiles",
                "summary": "Find profiles by external ID",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "name": "external_id",
                    "in": "query",
                    "required": true,
                    "description": "The external ID (`sub` or user ID) to look up.",
                    "schema": {
                      "$ref": "#/components/schemas/ExternalId"
                    }
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The profiles with this external ID.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ProfileList"
                        }
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidQuery"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles/{profile_id}": {
              "get": {
                "operationId": "getProfile",
                "summary": "A profile of the project",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The profile.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ProfileEnvelope"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              },
              "delete": {
                "operationId": "eraseProfile",
                "summary": "Erase a profile",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "responses": {
                  "204": {
                    "description": "The profile, its aliases, sessions and devices are erased.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles/{profile_id}/sessions": {
              "get": {
                "operationId": "listProfileSessions",
                "summary": "The live sessions of a profile",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The live sessions.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SessionList"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles/{profile_id}/sessions/revoke": {
              "post": {
                "operationId": "revokeProfileSessions",
                "summary": "End every session of a profile",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "responses": {
                  "204": {
                    "description": "Every session of the profile ended, with their devices.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles/{profile_id}/devices": {
              "get": {
                "operationId": "listProfileDevices",
                "summary": "The live push tokens of a profile",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The live devices, with their push tokens.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/AdminDeviceList"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/project": {
              "get": {
                "operationId": "getProject",
                "summary": "The project and its settings",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The project.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Project"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              },
              "patch": {
                "operationId": "updateProject",
                "summary": "Change the project's settings",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/ProjectSettingsPatch"
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The project after the change.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Project"
                        }
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/identity-secrets": {
              "get": {
                "operationId": "listIdentitySecrets",
                "summary": "The identity secrets, without the secrets",
                "tags": [
                  "Admin"
                ],
                "description": "Each secret's `kid`, creation and last use; never the secret itself.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The identity secrets, oldest first.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/IdentitySecretList"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              },
              "post": {
                "operationId": "createIdentitySecret",
                "summary": "Create an identity secret",
                "tags": [
                  "Admin"
                ],
                "description": "For rotation: a project has at most 3 active identity secrets; identity tokens without `kid` are tried against each.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "responses": {
                  "201": {
                    "description": "The new secret with its `kid`, shown once.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/CreatedIdentitySecret"
                        }
                      }
                    },
                    "links": {
                      "DeleteIdentitySecret": {
                        "operationId": "deleteIdentitySecret",
                        "parameters": {
                          "kid": "$response.body#/identity_secret/kid"
                        },
                        "description": "Retires this secret."
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "409": {
                    "$ref": "#/components/responses/IdentitySecretLimitReached"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/identity-secrets/{kid}": {
              "delete": {
                "operationId": "deleteIdentitySecret",
                "summary": "Retire an identity secret",
                "tags": [
                  "Admin"
                ],
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/Kid"
                  }
                ],
                "responses": {
                  "204": {
                    "description": "The secret no longer verifies identity tokens.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "409": {
                    "$ref": "#/components/responses/LastIdentitySecret"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/sessions/introspect": {
              "post": {
                "operationId": "introspectSession",
                "summary": "Is this session token or session JWT active?",
                "tags": [
                  "Admin"
                ],
                "description": "How an app backend checks an opaque session token, or a revocation at once (a session JWT verified offline may be up to 5 minutes stale). Only sessions of the key's project are ever active.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/IntrospectRequest"
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The introspection.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Introspection"
                        }
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/sessions/{session_id}": {
              "delete": {
                "operationId": "adminDeleteSession",
                "summary": "End a session of the project",
                "tags": [
                  "Admin"
                ],
                "description": "Ends the session at once, with the device tokens it registered. A session of the project that already ended answers 204 again.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/SessionId"
                  }
                ],
                "responses": {
                  "204": {
                    "description": "The session has ended.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles/{profile_id}/block": {
              "post": {
                "operationId": "blockProfile",
                "summary": "Block a profile",
                "tags": [
                  "Admin"
                ],
                "description": "Marks the profile blocked, ends its sessions and deletes its devices in one transaction; from then on identify (signed or asserted) and anonymous restore of it answer `403 profile_blocked`. A block racing an identify is never undone: the session identify opens is ended with the others.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "requestBody": {
                  "required": false,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/BlockRequest"
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "The profile, with `blocked`.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ProfileEnvelope"
                        }
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/profiles/{profile_id}/unblock": {
              "post": {
                "operationId": "unblockProfile",
                "summary": "Unblock a profile",
                "tags": [
                  "Admin"
                ],
                "description": "Identify and anonymous restore work again; ended sessions stay ended.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "parameters": [
                  {
                    "$ref": "#/components/parameters/ProfileId"
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The profile, with `blocked`.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ProfileEnvelope"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/signing-keys": {
              "get": {
                "operationId": "listSigningKeys",
                "summary": "The session-JWT signing keys",
                "tags": [
                  "Admin"
                ],
                "description": "Key IDs, times and status; never any private material.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "responses": {
                  "200": {
                    "description": "The signing keys.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SigningKeyList"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/signing-keys/rotate": {
              "post": {
                "operationId": "rotateSigningKey",
                "summary": "Rotate the session-JWT signing key",
                "tags": [
                  "Admin"
                ],
                "description": "A new ES256 key signs every session JWT from now on; the old key stays in the JWKS (`/v1/projects/{project_id}/jwks.json`) until every JWT it signed has expired, then is dropped. Backends that cache the JWKS must fetch it again on an unknown `kid`.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "responses": {
                  "201": {
                    "description": "The new current key.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SigningKeyEnvelope"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/v1/admin/api-keys/rotate": {
              "post": {
                "operationId": "rotateApiKey",
                "summary": "Rotate the publishable or the secret key",
                "tags": [
                  "Admin"
                ],
                "description": "A new key of the kind, shown once; the old one keeps working until the grace period ends (on every node: a node reads the project again within the project-cache time, 5 s by default), then answers `401 invalid_api_key`. Keys rotated out earlier keep their own grace periods.",
                "security": [
                  {
                    "secretKey": []
                  }
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/RotateAPIKeyRequest"
                      }
                    }
                  }
                },
                "responses": {
                  "201": {
                    "description": "The new key.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/RotatedAPIKey"
                        }
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/health": {
              "get": {
                "operationId": "getHealth",
                "summary": "Liveness and database reachability",
                "tags": [
                  "Operations"
                ],
                "security": [],
                "responses": {
                  "200": {
                    "description": "The database answers.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Health"
                        }
                      }
                    }
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "503": {
                    "$ref": "#/components/responses/ServiceUnavailable"
                  }
                }
              }
            },
            "/metrics": {
              "get": {
                "operationId": "getMetrics",
                "summary": "Prometheus metrics",
                "tags": [
                  "Operations"
                ],
                "security": [],
                "responses": {
                  "200": {
                    "description": "Prometheus text exposition format 0.0.4: request counts and latencies by route and status, sessions created, identify outcomes, verification failures by code.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "text/plain": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  }
                }
              }
            },
            "/openapi.json": {
              "get": {
                "operationId": "getOpenAPIDocument",
                "summary": "This document",
                "tags": [
                  "Operations"
                ],
                "security": [],
                "responses": {
                  "200": {
                    "description": "The OpenAPI 3.1 document.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    }
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  }
                }
              }
            }
          },
          "components": {
            "securitySchemes": {
              "publishableKey": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "pk_…",
                "description": "The project's publishable key: `pk_` followed by base64url. Public, it ships in the app binary. Grants the project's public endpoints (anonymous start, identify). An unknown `pk_` key: `401 invalid_api_key`."
              },
              "secretKey": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "sk_…",
                "description": "The project's secret key: `sk_` followed by base64url. Held by the app's backend only. Grants the admin endpoints of its own project; another project's resources are a plain 404. An unknown `sk_` key: `401 invalid_api_key`."
              },
              "sessionToken": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "st_…",
                "description": "An opaque session token: `st_` followed by the base64url of at least 256 random bits. Returned when a session opens and never rotated; the server stores only its SHA-256. Grants the session and private endpoints while the session is alive (`401 session_not_found | session_expired | session_revoked` otherwise)."
              },
              "sessionJWT": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "A session JWT: a compact JWS, ES256, header `typ: session+jwt` and `kid`; claims `iss` (the server's base URL), `aud` (project ID), `sub` (profile ID), `sid` (session ID), `exp` (5 minutes after issue), `iat`, `nbf`, `kind` (always present: `anonymous`, `verified` or `unverified`; an `external_id` is proven only when it is `verified`), `external_id`. Verifiable offline through `GET /v1/projects/{project_id}/jwks.json`. The server accepts it only while its session is alive (it checks `sid`), so a revoke takes effect at once; `POST /v1/sessions/authenticate` also accepts one whose own `exp` has passed while its signature is good and its session alive. A bad one: `401 invalid_credentials`."
              }
            },
            "headers": {
              "X-Request-Id": {
                "description": "The request's ID, on every response and in the server's logs; quote it when reporting a problem. A plain client-supplied `X-Request-Id` (at most 128 of `A-Z a-z 0-9 - _ . :`) is echoed, otherwise the server makes one.",
                "required": true,
                "schema": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 128,
                  "pattern": "^[A-Za-z0-9._:-]+$"
                }
              },
              "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "required": true,
                "schema": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "Retry-After-Unavailable": {
                "description": "Seconds to wait before retrying, when the server can tell (for example while the database reconnects).",
                "required": false,
                "schema": {
                  "type": "integer",
                  "minimum": 0
                }
              },
              "Cache-Control": {
                "description": "How long verifiers may cache the key set.",
                "required": true,
                "schema": {
                  "type": "string"
                }
              }
            },
            "parameters": {
              "SessionId": {
                "name": "session_id",
                "in": "path",
                "required": true,
                "description": "A session ID (`ses_…`).",
                "schema": {
                  "$ref": "#/components/schemas/SessionId"
                }
              },
              "DeviceId": {
                "name": "device_id",
                "in": "path",
                "required": true,
                "description": "A device ID (`dev_…`).",
                "schema": {
                  "$ref": "#/components/schemas/DeviceId"
                }
              },
              "ProfileId": {
                "name": "profile_id",
                "in": "path",
                "required": true,
                "description": "A profile ID (`usr_…`); the ID of an anonymous profile merged into another resolves to that one (an alias).",
                "schema": {
                  "$ref": "#/components/schemas/ProfileId"
                }
              },
              "ProjectId": {
                "name": "project_id",
                "in": "path",
                "required": true,
                "description": "A project ID (`prj_…`).",
                "schema": {
                  "$ref": "#/components/schemas/ProjectId"
                }
              },
              "Kid": {
                "name": "kid",
                "in": "path",
                "required": true,
                "description": "The key ID of an identity secret.",
                "schema": {
                  "$ref": "#/components/schemas/KeyId"
                }
              }
            },
            "schemas": {
              "Error": {
                "type": "object",
                "description": "Every non-2xx answer.",
                "required": [
                  "error"
                ],
                "additionalProperties": false,
                "properties": {
                  "error": {
                    "type": "object",
                    "required": [
                      "code",
                      "message"
                    ],
                    "additionalProperties": false,
                    "properties": {
                      "code": {
                        "$ref": "#/components/schemas/ErrorCode"
                      },
                      "message": {
                        "type": "string",
                        "description": "Human text; never contains a credential."
                      }
                    }
                  }
                }
              },
              "ErrorCode": {
                "type": "string",
                "description": "A stable, machine-readable error code. Clients must tolerate codes they do not know yet.",
                "enum": [
                  "invalid_request",
                  "payload_too_large",
                  "invalid_api_key",
                  "invalid_credentials",
                  "invalid_identity_token",
                  "invalid_signature",
                  "unsupported_algorithm",
                  "identity_token_expired",
                  "identity_token_not_yet_valid",
                  "identity_token_lifetime_too_long",
                  "identity_token_replayed",
                  "audience_mismatch",
                  "invalid_claims",
                  "invalid_email",
                  "invalid_name",
                  "invalid_avatar_url",
                  "external_user_id_changed",
                  "unverified_identify_disabled",
                  "installation_conflict",
                  "invalid_session_duration",
                  "session_token_required",
                  "session_not_found",
                  "session_expired",
                  "session_revoked",
                  "not_found",
                  "method_not_allowed",
                  "identity_secret_limit_reached",
                  "last_identity_secret",
                  "rate_limited",
                  "internal_error",
                  "service_unavailable",
                  "profile_blocked"
                ]
              },
              "Timestamp": {
                "type": "string",
                "format": "date-time",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
                "description": "RFC 3339 in UTC with second precision.",
                "examples": [
                  "2026-11-20T12:00:00Z"
                ]
              },
              "ProjectId": {
                "type": "string",
                "pattern": "^prj_[A-Za-z0-9_-]+$",
                "maxLength": 128
              },
              "ProfileId": {
                "type": "string",
                "pattern": "^usr_[A-Za-z0-9_-]+$",
                "maxLength": 128
              },
              "SessionId": {
                "type": "string",
                "pattern": "^ses_[A-Za-z0-9_-]+$",
                "maxLength": 128
              },
              "DeviceId": {
                "type": "string",
                "pattern": "^dev_[A-Za-z0-9_-]+$",
                "maxLength": 128
              },
              "KeyId": {
                "type": "string",
                "pattern": "^[A-Za-z0-9_-]{1,64}$"
              },
              "InstallationId": {
                "type": "string",
                "format": "uuid",
                "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
                "description": "A client-generated UUID, lower-case with dashes."
              },
              "ExternalId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]+$",
                "description": "The app's stable user ID: 1–255 Unicode scalars (at most 1020 UTF-8 bytes; a combining mark counts as one), no control characters. Compared byte for byte: no Unicode normalization, so NFC and NFD spellings of one text are two users."
              },
              "Profile": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "id",
                  "kind",
                  "external_id",
                  "verified",
                  "name",
                  "avatar_url",
                  "email",
                  "created_at",
                  "updated_at"
                ],
                "properties": {
                  "id": {
                    "$ref": "#/components/schemas/ProfileId"
                  },
                  "kind": {
                    "type": "string",
                    "enum": [
                      "anonymous",
                      "identified"
                    ]
                  },
                  "external_id": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/ExternalId"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "The identity token's `sub`, or the client-asserted user ID, or `null` for an anonymous profile."
                  },
                  "verified": {
                    "type": "boolean",
                    "description": "True only when established by a signed identity token."
                  },
                  "name": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "maxLength": 200,
                    "description": "From the identity token's `name`, `display_name` or `displayName`."
                  },
                  "avatar_url": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "format": "uri",
                    "pattern": "^https://",
                    "maxLength": 2048,
                    "description": "From the identity token's `avatar_url`, `avatarUrl` or `picture`."
                  },
                  "email": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "format": "email",
                    "maxLength": 254,
                    "description": "From the identity token's `email`."
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "updated_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "blocked": {
                    "type": "boolean",
                    "description": "Present in admin answers only: whether the profile is blocked (identify and anonymous restore answer `403 profile_blocked`)."
                  }
                }
              },
              "Session": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "id",
                  "profile_id",
                  "installation_id",
                  "created_at",
                  "last_authenticated_at",
                  "expires_at"
                ],
                "properties": {
                  "id": {
                    "$ref": "#/components/schemas/SessionId"
                  },
                  "profile_id": {
                    "$ref": "#/components/schemas/ProfileId"
                  },
                  "installation_id": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/InstallationId"
                      },
                      {
                        "type": "null"
                      }
                    ]
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "last_authenticated_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "expires_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  }
                }
              },
              "Capabilities": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "authenticated",
                  "kind"
                ],
                "properties": {
                  "authenticated": {
                    "type": "boolean",
                    "description": "True only for a session established by a signed identity token."
                  },
                  "kind": {
                    "type": "string",
                    "enum": [
                      "anonymous",
                      "verified",
                      "unverified"
                    ]
                  }
                }
              },
              "Merge": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "outcome",
                  "from_profile_id"
                ],
                "description": "What identify did with the calling session's profile.",
                "properties": {
                  "outcome": {
                    "type": "string",
                    "enum": [
                      "promoted",
                      "merged",
                      "unchanged"
                    ],
                    "description": "`promoted`: no profile had this `sub`, the anonymous profile became it. `merged`: a profile had it; the anonymous profile was folded into it in one transaction and kept as an alias. `unchanged`: the session already belonged to this user."
                  },
                  "from_profile_id": {
                    "$ref": "#/components/schemas/ProfileId"
                  }
                }
              },
              "SessionToken": {
                "type": "string",
                "pattern": "^st_[A-Za-z0-9_-]{43,}$",
                "description": "The opaque session token (`st_…`). Keep it encrypted at rest."
              },
              "SessionJWT": {
                "type": "string",
                "pattern": "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$",
                "description": "A session JWT (ES256, `typ: session+jwt`), valid 5 minutes."
              },
              "SessionEnvelope": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "session",
                  "session_token",
                  "session_jwt",
                  "profile",
                  "capabilities",
                  "server_time"
                ],
                "description": "The answer of every call that creates or checks a session.",
                "properties": {
                  "session": {
                    "$ref": "#/components/schemas/Session"
                  },
                  "session_token": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/SessionToken"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "The opaque session token. `null` when the request authenticated with a session JWT, which does not reveal it."
                  },
                  "session_jwt": {
                    "$ref": "#/components/schemas/SessionJWT"
                  },
                  "profile": {
                    "$ref": "#/components/schemas/Profile"
                  },
                  "capabilities": {
                    "$ref": "#/components/schemas/Capabilities"
                  },
                  "server_time": {
                    "allOf": [
                      {
                        "$ref": "#/components/schemas/Timestamp"
                      }
                    ],
                    "description": "The server's clock, to correct client skew."
                  },
                  "extension_capped": {
                    "type": "boolean",
                    "description": "Present when the request carried `session_duration_minutes`: `true` when the duration asked for was above the project's maximum for this kind of session and was capped to it, `false` when it was used as asked. Absent otherwise (a heartbeat, a request without a duration)."
                  }
                }
              },
              "IdentifyEnvelope": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "session",
                  "session_token",
                  "session_jwt",
                  "profile",
                  "capabilities",
                  "server_time",
                  "merge"
                ],
                "description": "The session envelope of identify, with `merge`.",
                "properties": {
                  "session": {
                    "$ref": "#/components/schemas/Session"
                  },
                  "session_token": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/SessionToken"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "The opaque session token. `null` when the request authenticated with a session JWT, which does not reveal it."
                  },
                  "session_jwt": {
                    "$ref": "#/components/schemas/SessionJWT"
                  },
                  "profile": {
                    "$ref": "#/components/schemas/Profile"
                  },
                  "capabilities": {
                    "$ref": "#/components/schemas/Capabilities"
                  },
                  "server_time": {
                    "allOf": [
                      {
                        "$ref": "#/components/schemas/Timestamp"
                      }
                    ],
                    "description": "The server's clock, to correct client skew."
                  },
                  "extension_capped": {
                    "type": "boolean",
                    "description": "Present when the request carried `session_duration_minutes`: `true` when the duration asked for was above the project's maximum for this kind of session and was capped to it, `false` when it was used as asked. Absent otherwise (a heartbeat, a request without a duration)."
                  },
                  "merge": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/Merge"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "What became of the calling session's profile; `null` when identify was called with the publishable key."
                  }
                }
              },
              "Me": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "profile",
                  "capabilities"
                ],
                "properties": {
                  "profile": {
                    "$ref": "#/components/schemas/Profile"
                  },
                  "capabilities": {
                    "$ref": "#/components/schemas/Capabilities"
                  }
                }
              },
              "SessionList": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "sessions"
                ],
                "properties": {
                  "sessions": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/Session"
                    }
                  }
                }
              },
              "Platform": {
                "type": "string",
                "enum": [
                  "apns",
                  "fcm"
                ]
              },
              "Environment": {
                "type": "string",
                "enum": [
                  "sandbox",
                  "production"
                ]
              },
              "PushToken": {
                "type": "string",
                "minLength": 1,
                "maxLength": 4096,
                "pattern": "^[!-~]+$",
                "description": "The APNs device token or FCM registration token: 1–4096 printable ASCII characters."
              },
              "Device": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "id",
                  "platform",
                  "environment",
                  "session_id",
                  "created_at"
                ],
                "description": "A push registration, bound to the session that registered it. The push token itself is returned only to the secret key.",
                "properties": {
                  "id": {
                    "$ref": "#/components/schemas/DeviceId"
                  },
                  "platform": {
                    "$ref": "#/components/schemas/Platform"
                  },
                  "environment": {
                    "$ref": "#/components/schemas/Environment"
                  },
                  "session_id": {
                    "$ref": "#/components/schemas/SessionId"
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  }
                }
              },
              "AdminDevice": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "id",
                  "platform",
                  "environment",
                  "session_id",
                  "created_at",
                  "token",
                  "verified_session"
                ],
                "description": "A push registration with its push token, for the backend that sends pushes.",
                "properties": {
                  "id": {
                    "$ref": "#/components/schemas/DeviceId"
                  },
                  "platform": {
                    "$ref": "#/components/schemas/Platform"
                  },
                  "environment": {
                    "$ref": "#/components/schemas/Environment"
                  },
                  "session_id": {
                    "$ref": "#/components/schemas/SessionId"
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "token": {
                    "$ref": "#/components/schemas/PushToken"
                  },
                  "verified_session": {
                    "type": "boolean",
                    "description": "Whether the session that registered it was established by a signed identity token. `false` for anonymous and unverified sessions: an unverified session's user ID was only asserted by a client, so a push to it may reach someone else's device."
                  }
                }
              },
              "DeviceEnvelope": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "device"
                ],
                "properties": {
                  "device": {
                    "$ref": "#/components/schemas/Device"
                  }
                }
              },
              "AdminDeviceList": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "devices"
                ],
                "properties": {
                  "devices": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/AdminDevice"
                    }
                  }
                }
              },
              "ProfileEnvelope": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "profile"
                ],
                "properties": {
                  "profile": {
                    "$ref": "#/components/schemas/Profile"
                  }
                }
              },
              "ProfileList": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "profiles"
                ],
                "properties": {
                  "profiles": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/Profile"
                    },
                    "description": "At most one verified and one unverified profile can share an external ID."
                  }
                }
              },
              "ProjectSettings": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "allow_unverified_identify",
                  "require_audience",
                  "expected_issuer",
                  "max_identity_token_lifetime_seconds",
                  "leeway_seconds",
                  "anonymous_session_minutes",
                  "identified_session_minutes",
                  "rate_limits"
                ],
                "properties": {
                  "allow_unverified_identify": {
                    "type": "boolean",
                    "description": "Whether identify accepts the client-asserted `{user_id}` form. Default false."
                  },
                  "require_audience": {
                    "type": "boolean",
                    "description": "Whether identity tokens must carry an `aud` with the project ID or slug. Default false."
                  },
                  "expected_issuer": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "minLength": 1,
                    "maxLength": 2048,
                    "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]+$",
                    "description": "When set, identity tokens must carry exactly this `iss`. Default null."
                  },
                  "max_identity_token_lifetime_seconds": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 86400,
                    "description": "How far ahead an identity token's `exp` may be. Default 3600."
                  },
                  "leeway_seconds": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 600,
                    "description": "Clock leeway for `exp`, `nbf`, `iat`. Default 60."
                  },
                  "anonymous_session_minutes": {
                    "type": "integer",
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "The longest, and default, anonymous session. Default 525600."
                  },
                  "identified_session_minutes": {
                    "type": "integer",
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "The longest, and default, identified session. Default 43200."
                  },
                  "rate_limits": {
                    "$ref": "#/components/schemas/RateLimits"
                  }
                }
              },
              "RateLimits": {
                "type": "object",
                "additionalProperties": false,
                "description": "How many attempts one client may make per minute. Each limit counts in fixed one-minute windows kept in the shared database, so it holds whatever the number of server processes; past it the server answers `429 rate_limited` with `Retry-After` (the seconds left in the window). While a client is blocked every attempt of that kind is refused, even one that would succeed. The client is the socket's peer, or the right-most address of the header named by `--trusted-proxy-header` (IPv6 counted per /64). `null` is unlimited. Failed session lookups (a session token or session JWT that finds no session) are limited per client address for the whole server (`--failed-session-lookups-per-minute`, default 120), since a session token names no project.",
                "required": [
                  "anonymous_starts_per_minute",
                  "failed_identifies_per_minute",
                  "failed_identifies_per_installation_per_minute"
                ],
                "properties": {
                  "anonymous_starts_per_minute": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 1,
                    "maximum": 1000000,
                    "description": "Anonymous starts (new or restored) per client address. Default 600."
                  },
                  "failed_identifies_per_minute": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 1,
                    "maximum": 1000000,
                    "description": "Identifies whose identity token does not verify or was already used, per client address. Default 60."
                  },
                  "failed_identifies_per_installation_per_minute": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 1,
                    "maximum": 1000000,
                    "description": "Failed identifies per installation (identify called with an installation's anonymous session). Default 10."
                  }
                }
              },
              "Project": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "project"
                ],
                "properties": {
                  "project": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "id",
                      "name",
                      "slug",
                      "created_at",
                      "updated_at",
                      "settings",
                      "identity_secrets"
                    ],
                    "properties": {
                      "id": {
                        "$ref": "#/components/schemas/ProjectId"
                      },
                      "name": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": 200
                      },
                      "slug": {
                        "type": "string",
                        "pattern": "^[a-z0-9][a-z0-9-]{0,63}$"
                      },
                      "created_at": {
                        "$ref": "#/components/schemas/Timestamp"
                      },
                      "updated_at": {
                        "$ref": "#/components/schemas/Timestamp"
                      },
                      "settings": {
                        "$ref": "#/components/schemas/ProjectSettings"
                      },
                      "identity_secrets": {
                        "type": "array",
                        "maxItems": 3,
                        "description": "The active identity secrets (never their values).",
                        "items": {
                          "type": "object",
                          "additionalProperties": false,
                          "required": [
                            "kid",
                            "created_at"
                          ],
                          "properties": {
                            "kid": {
                              "$ref": "#/components/schemas/KeyId"
                            },
                            "created_at": {
                              "$ref": "#/components/schemas/Timestamp"
                            }
                          }
                        }
                      }
                    }
                  }
                }
              },
              "ProjectSettingsPatch": {
                "type": "object",
                "additionalProperties": false,
                "description": "The settings to change; members left out (or `null`, except `expected_issuer`) keep their value. Unknown members are rejected (`400 invalid_request`): a misspelt security setting must not be silently ignored.",
                "properties": {
                  "allow_unverified_identify": {
                    "type": [
                      "boolean",
                      "null"
                    ]
                  },
                  "require_audience": {
                    "type": [
                      "boolean",
                      "null"
                    ]
                  },
                  "expected_issuer": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "minLength": 1,
                    "maxLength": 2048,
                    "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]+$",
                    "description": "`null` clears it. At most 2048 UTF-8 bytes, no control characters."
                  },
                  "max_identity_token_lifetime_seconds": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 1,
                    "maximum": 86400
                  },
                  "leeway_seconds": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 0,
                    "maximum": 600
                  },
                  "anonymous_session_minutes": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "The longest, and default, anonymous session."
                  },
                  "identified_session_minutes": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "The longest, and default, identified session."
                  },
                  "rate_limits": {
                    "type": [
                      "object",
                      "null"
                    ],
                    "additionalProperties": false,
                    "description": "The limits to change; members left out keep their value, `null` makes a limit unlimited. Unknown members and limits outside 1 … 1000000 are rejected (`400 invalid_request`).",
                    "properties": {
                      "anonymous_starts_per_minute": {
                        "type": [
                          "integer",
                          "null"
                        ],
                        "minimum": 1,
                        "maximum": 1000000
                      },
                      "failed_identifies_per_minute": {
                        "type": [
                          "integer",
                          "null"
                        ],
                        "minimum": 1,
                        "maximum": 1000000
                      },
                      "failed_identifies_per_installation_per_minute": {
                        "type": [
                          "integer",
                          "null"
                        ],
                        "minimum": 1,
                        "maximum": 1000000
                      }
                    }
                  }
                }
              },
              "CreatedIdentitySecret": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "identity_secret"
                ],
                "properties": {
                  "identity_secret": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "kid",
                      "secret",
                      "created_at"
                    ],
                    "properties": {
                      "kid": {
                        "$ref": "#/components/schemas/KeyId"
                      },
                      "secret": {
                        "type": "string",
                        "minLength": 32,
                        "description": "The secret, shown once; generated from 32 random bytes. The HMAC key is its UTF-8 bytes, exactly as a backend passes it to a JWT library."
                      },
                      "created_at": {
                        "$ref": "#/components/schemas/Timestamp"
                      }
                    }
                  }
                }
              },
              "JWK": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "kty",
                  "crv",
                  "x",
                  "y",
                  "kid"
                ],
                "properties": {
                  "kty": {
                    "const": "EC"
                  },
                  "crv": {
                    "const": "P-256"
                  },
                  "x": {
                    "type": "string",
                    "pattern": "^[A-Za-z0-9_-]{43}$"
                  },
                  "y": {
                    "type": "string",
                    "pattern": "^[A-Za-z0-9_-]{43}$"
                  },
                  "kid": {
                    "type": "string",
                    "minLength": 1
                  },
                  "use": {
                    "const": "sig"
                  },
                  "alg": {
                    "const": "ES256"
                  }
                }
              },
              "JWKS": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "keys"
                ],
                "properties": {
                  "keys": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/JWK"
                    }
                  }
                }
              },
              "Health": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "status"
                ],
                "properties": {
                  "status": {
                    "const": "ok"
                  }
                }
              },
              "AnonymousSessionRequest": {
                "type": "object",
                "required": [
                  "installation_id",
                  "installation_secret"
                ],
                "description": "Unknown members are ignored, so that a newer SDK keeps working against an older server (mobile apps stay installed for years; servers are upgraded on their own schedule).",
                "properties": {
                  "installation_id": {
                    "$ref": "#/components/schemas/InstallationId"
                  },
                  "installation_secret": {
                    "type": "string",
                    "minLength": 43,
                    "maxLength": 512,
                    "pattern": "^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{4}|[A-Za-z0-9_-]{2}[AEIMQUYcgkosw048]|[A-Za-z0-9_-][AQgw])$",
                    "description": "At least 32 random bytes in canonical base64url without padding, generated and kept by the SDK; at most 512 characters. Only its SHA-256 is stored."
                  },
                  "session_duration_minutes": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "Session lifetime in minutes, 5 … 525600 (one year: a deliberate deviation from OWASP ASVS session lifetimes, for apps that keep users signed in), else `400 invalid_session_duration`. It is capped by the project's maximum for the kind of session (`anonymous_session_minutes`, `identified_session_minutes`); absent, that maximum is used. `null` is the same as leaving it out."
                  }
                }
              },
              "IdentifyWithToken": {
                "type": "object",
                "required": [
                  "identity_token"
                ],
                "title": "Signed identify",
                "description": "Unknown members are ignored, so that a newer SDK keeps working against an older server (mobile apps stay installed for years; servers are upgraded on their own schedule).",
                "properties": {
                  "identity_token": {
                    "type": "string",
                    "maxLength": 8192,
                    "description": "A compact JWS (HS256) minted by the app's backend with one of the project's identity secrets; see the contract for its claims. Over 8 KiB: `401 invalid_identity_token`."
                  },
                  "user_id": {
                    "type": "null"
                  },
                  "session_duration_minutes": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "Session lifetime in minutes, 5 … 525600 (one year: a deliberate deviation from OWASP ASVS session lifetimes, for apps that keep users signed in), else `400 invalid_session_duration`. It is capped by the project's maximum for the kind of session (`anonymous_session_minutes`, `identified_session_minutes`); absent, that maximum is used. `null` is the same as leaving it out."
                  }
                }
              },
              "IdentifyWithUserId": {
                "type": "object",
                "required": [
                  "user_id"
                ],
                "title": "Client-asserted identify",
                "description": "Unknown members are ignored, so that a newer SDK keeps working against an older server (mobile apps stay installed for years; servers are upgraded on their own schedule).",
                "properties": {
                  "user_id": {
                    "$ref": "#/components/schemas/ExternalId"
                  },
                  "identity_token": {
                    "type": "null"
                  },
                  "session_duration_minutes": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "Session lifetime in minutes, 5 … 525600 (one year: a deliberate deviation from OWASP ASVS session lifetimes, for apps that keep users signed in), else `400 invalid_session_duration`. It is capped by the project's maximum for the kind of session (`anonymous_session_minutes`, `identified_session_minutes`); absent, that maximum is used. `null` is the same as leaving it out."
                  }
                }
              },
              "AuthenticateRequest": {
                "type": "object",
                "description": "Unknown members are ignored, so that a newer SDK keeps working against an older server (mobile apps stay installed for years; servers are upgraded on their own schedule).",
                "properties": {
                  "session_duration_minutes": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 5,
                    "maximum": 525600,
                    "description": "Session lifetime in minutes, 5 … 525600 (one year: a deliberate deviation from OWASP ASVS session lifetimes, for apps that keep users signed in), else `400 invalid_session_duration`. It is capped by the project's maximum for the kind of session (`anonymous_session_minutes`, `identified_session_minutes`); absent, that maximum is used. `null` is the same as leaving it out."
                  }
                }
              },
              "RegisterDeviceRequest": {
                "type": "object",
                "required": [
                  "platform",
                  "token"
                ],
                "description": "Unknown members are ignored, so that a newer SDK keeps working against an older server (mobile apps stay installed for years; servers are upgraded on their own schedule).",
                "properties": {
                  "platform": {
                    "$ref": "#/components/schemas/Platform"
                  },
                  "token": {
                    "$ref": "#/components/schemas/PushToken"
                  },
                  "environment": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/Environment"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "Default `production`. `null` is the same as leaving it out."
                  }
                }
              },
              "IdentitySecretInfo": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "kid",
                  "created_at",
                  "last_used_at"
                ],
                "properties": {
                  "kid": {
                    "$ref": "#/components/schemas/KeyId"
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "last_used_at": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/Timestamp"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "When identify last verified a token with this secret, recorded at most about once a minute per server node (so up to a minute early); null when never used since it was recorded."
                  }
                }
              },
              "IdentitySecretList": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "identity_secrets"
                ],
                "properties": {
                  "identity_secrets": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                      "$ref": "#/components/schemas/IdentitySecretInfo"
                    }
                  }
                }
              },
              "IntrospectRequest": {
                "type": "object",
                "description": "Exactly one of the two members. A string that is not a session credential of the project is simply not active.",
                "oneOf": [
                  {
                    "type": "object",
                    "required": [
                      "session_token"
                    ],
                    "properties": {
                      "session_token": {
                        "type": "string"
                      },
                      "session_jwt": false
                    }
                  },
                  {
                    "type": "object",
                    "required": [
                      "session_jwt"
                    ],
                    "properties": {
                      "session_jwt": {
                        "type": "string"
                      },
                      "session_token": false
                    }
                  }
                ]
              },
              "Introspection": {
                "type": "object",
                "description": "RFC 7662 style: `active: false` alone for anything that is not a live session of the key's project (unknown, ended, expired JWT, another project's, malformed); else the session, its profile and capabilities.",
                "oneOf": [
                  {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "active"
                    ],
                    "properties": {
                      "active": {
                        "const": false
                      }
                    }
                  },
                  {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "active",
                      "session",
                      "profile",
                      "capabilities"
                    ],
                    "properties": {
                      "active": {
                        "const": true
                      },
                      "session": {
                        "$ref": "#/components/schemas/Session"
                      },
                      "profile": {
                        "$ref": "#/components/schemas/Profile"
                      },
                      "capabilities": {
                        "$ref": "#/components/schemas/Capabilities"
                      }
                    }
                  }
                ]
              },
              "BlockRequest": {
                "type": "object",
                "properties": {
                  "reason": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "maxLength": 500,
                    "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
                    "description": "Why, for the operators: at most 500 characters, no control characters."
                  }
                },
                "description": "Optional body; an empty body blocks without a reason."
              },
              "SigningKey": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "kid",
                  "algorithm",
                  "created_at",
                  "retired_at",
                  "status",
                  "published_until"
                ],
                "properties": {
                  "kid": {
                    "$ref": "#/components/schemas/KeyId"
                  },
                  "algorithm": {
                    "const": "ES256"
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "retired_at": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/Timestamp"
                      },
                      {
                        "type": "null"
                      }
                    ]
                  },
                  "status": {
                    "type": "string",
                    "enum": [
                      "current",
                      "retired",
                      "expired"
                    ],
                    "description": "`current` signs new session JWTs; `retired` no longer signs but stays in the JWKS until every JWT it signed has expired; `expired` is no longer published."
                  },
                  "published_until": {
                    "oneOf": [
                      {
                        "$ref": "#/components/schemas/Timestamp"
                      },
                      {
                        "type": "null"
                      }
                    ],
                    "description": "For a retired key, when it leaves the JWKS: its retirement plus the session JWT lifetime (5 min), the leeway and the project cache time."
                  }
                }
              },
              "SigningKeyList": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "signing_keys"
                ],
                "properties": {
                  "signing_keys": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/SigningKey"
                    },
                    "description": "Newest first. Never any private material."
                  }
                }
              },
              "SigningKeyEnvelope": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "signing_key"
                ],
                "properties": {
                  "signing_key": {
                    "$ref": "#/components/schemas/SigningKey"
                  }
                }
              },
              "RotateAPIKeyRequest": {
                "type": "object",
                "required": [
                  "kind"
                ],
                "properties": {
                  "kind": {
                    "type": "string",
                    "enum": [
                      "publishable",
                      "secret"
                    ]
                  },
                  "grace_seconds": {
                    "type": [
                      "integer",
                      "null"
                    ],
                    "minimum": 0,
                    "maximum": 2592000,
                    "default": 86400,
                    "description": "How long the old key keeps working: 24 h when absent or null, 0 = it stops now, at most 30 days."
                  }
                }
              },
              "RotatedAPIKey": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "api_key"
                ],
                "properties": {
                  "api_key": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": [
                      "kind",
                      "key",
                      "created_at",
                      "previous_key_expires_at"
                    ],
                    "properties": {
                      "kind": {
                        "type": "string",
                        "enum": [
                          "publishable",
                          "secret"
                        ]
                      },
                      "key": {
                        "type": "string",
                        "pattern": "^(pk|sk)_[A-Za-z0-9_-]+$",
                        "description": "The new key, shown once; only its hash is stored."
                      },
                      "created_at": {
                        "$ref": "#/components/schemas/Timestamp"
                      },
                      "previous_key_expires_at": {
                        "allOf": [
                          {
                            "$ref": "#/components/schemas/Timestamp"
                          }
                        ],
                        "description": "When the key it replaced stops working (`401 invalid_api_key` from then on)."
                      }
                    }
                  }
                }
              }
            },
            "responses": {
              "InvalidRequest": {
                "description": "The request is malformed: not a JSON object, a missing or wrongly typed member, a value out of range.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_request"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "InvalidQuery": {
                "description": "A query parameter is missing or malformed.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_request"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "InvalidSessionRequest": {
                "description": "The request is malformed, or `session_duration_minutes` is outside 5 … 525600.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_request",
                                    "invalid_session_duration"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "IdentifyBadRequest": {
                "description": "The request is malformed, or the identity token's claims are invalid.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_request",
                                    "invalid_session_duration",
                                    "invalid_claims",
                                    "invalid_email",
                                    "invalid_name",
                                    "invalid_avatar_url"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "ApiKeyUnauthorized": {
                "description": "No credential or another kind of credential (`invalid_credentials`), or an unknown key (`invalid_api_key`).",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_api_key",
                                    "invalid_credentials"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "SessionUnauthorized": {
                "description": "No credential, another kind of credential or a bad session JWT (`invalid_credentials`), or a session that is not alive.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_credentials",
                                    "session_not_found",
                                    "session_expired",
                                    "session_revoked"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "IdentifyUnauthorized": {
                "description": "A bad credential or session, or an identity token that fails verification (checked signature first).",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "invalid_api_key",
                                    "invalid_credentials",
                                    "session_not_found",
                                    "session_expired",
                                    "session_revoked",
                                    "invalid_identity_token",
                                    "invalid_signature",
                                    "unsupported_algorithm",
                                    "identity_token_expired",
                                    "identity_token_not_yet_valid",
                                    "identity_token_lifetime_too_long",
                                    "identity_token_replayed",
                                    "audience_mismatch"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "UnverifiedIdentifyDisabled": {
                "description": "The project does not allow the client-asserted `{user_id}` form.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "unverified_identify_disabled"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "NotFound": {
                "description": "No such resource visible to this credential.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "not_found"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "InstallationConflict": {
                "description": "This installation ID is registered with another installation secret.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "installation_conflict"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "ExternalUserIdChanged": {
                "description": "The calling session belongs to another identified user (or the same ID at another verification level); sign out first.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "external_user_id_changed"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "IdentitySecretLimitReached": {
                "description": "The project already has 3 active identity secrets; delete one first.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "identity_secret_limit_reached"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "LastIdentitySecret": {
                "description": "This is the project's only identity secret; create another first.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "last_identity_secret"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "PayloadTooLarge": {
                "description": "The request body exceeds 16 KiB.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "payload_too_large"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "RateLimited": {
                "description": "Too many requests: a rate limit of the project (`rate_limits`: anonymous starts, failed identifies) or of the server (failed session lookups) is reached for this client. `Retry-After` gives the seconds until the window ends.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  },
                  "Retry-After": {
                    "$ref": "#/components/headers/Retry-After"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "rate_limited"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "ServiceUnavailable": {
                "description": "The database is not available.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  },
                  "Retry-After": {
                    "$ref": "#/components/headers/Retry-After-Unavailable"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "service_unavailable"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "ProfileBlocked": {
                "description": "The profile is blocked by the app (`POST /v1/admin/profiles/{profile_id}/block`).",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "profile_blocked"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              },
              "IdentifyForbidden": {
                "description": "`unverified_identify_disabled`: the project does not allow the client-asserted `{user_id}` form. `profile_blocked`: the profile signed in to, or merged into, is blocked.",
                "headers": {
                  "X-Request-Id": {
                    "$ref": "#/components/headers/X-Request-Id"
                  }
                },
                "content": {
                  "application/json": {
                    "schema": {
                      "allOf": [
                        {
                          "$ref": "#/components/schemas/Error"
                        },
                        {
                          "properties": {
                            "error": {
                              "properties": {
                                "code": {
                                  "enum": [
                                    "unverified_identify_disabled",
                                    "profile_blocked"
                                  ]
                                }
                              }
                            }
                          }
                        }
                      ]
                    }
                  }
                }
              }
            }
          }
        }
        """#
}
