/// The server's OpenAPI 3.1 document, served verbatim at `GET /openapi.json`.
///
/// It describes exactly the wire contract of `shared/API.md`: every path and method, every request
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
            "description": "The wire contract between the Tessera server, the Tessera client SDK and the app backends that mint identity tokens. JSON in and out, `snake_case` fields, RFC 3339 UTC times with second precision. Request bodies are capped at 16 KiB. Every response carries `X-Request-Id`; every non-2xx answer is `{\"error\": {\"code\", \"message\"}}`. Credentials go in `Authorization: Bearer …` (scheme word case-insensitive, never in the query string); an endpoint answers `401 invalid_credentials` to a kind of credential it does not take.",
            "license": {
              "name": "Apache-2.0",
              "identifier": "Apache-2.0"
            }
          },
          "tags": [
            {
              "name": "Sessions",
              "description": "Anonymous start, identify, heartbeat, revoke."
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
                "description": "Creates, or restores, the anonymous identity of one app installation and opens a session for it. A known `installation_id` presented with another secret gets `409 installation_conflict`, so knowing an installation ID gives nothing.",
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
                        "description": "The profile of this session, through the admin API."
                      },
                      "ListProfileSessions": {
                        "operationId": "listProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The live sessions of this profile, through the admin API."
                      },
                      "EraseProfile": {
                        "operationId": "eraseProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Erases this profile, through the admin API."
                      }
                    }
                  },
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
                        "description": "The profile of this session, through the admin API."
                      },
                      "ListProfileSessions": {
                        "operationId": "listProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The live sessions of this profile, through the admin API."
                      },
                      "EraseProfile": {
                        "operationId": "eraseProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Erases this profile, through the admin API."
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidSessionRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "409": {
                    "$ref": "#/components/responses/InstallationConflict"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                    "description": "The project's session-JWT verification keys, with `kid`; retired keys stay listed until their JWTs expire.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
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
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                "description": "Signed form `{identity_token}`: verifies the token with the project's identity secrets (the project comes from the credential) and yields a verified session (`capabilities.authenticated = true`). Client-asserted form `{user_id}`: only when the project allows it; yields `verified = false`, `authenticated = false`. Called with an anonymous session, its profile is promoted or merged and that session ends; called with a session of another identified user: `409 external_user_id_changed`.",
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
                    "description": "The identified session. With an anonymous calling session, `merge` says what became of its profile; the calling session is ended.",
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
                        "description": "The profile of this session, through the admin API."
                      },
                      "ListProfileSessions": {
                        "operationId": "listProfileSessions",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "The live sessions of this profile, through the admin API."
                      },
                      "EraseProfile": {
                        "operationId": "eraseProfile",
                        "parameters": {
                          "profile_id": "$response.body#/profile/id"
                        },
                        "description": "Erases this profile, through the admin API."
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
                    "$ref": "#/components/responses/UnverifiedIdentifyDisabled"
                  },
                  "409": {
                    "$ref": "#/components/responses/ExternalUserIdChanged"
                  },
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                "description": "Without a duration (or without a body) it only checks the session and returns a fresh session JWT. With `session_duration_minutes` it also extends: `expires_at = max(expires_at, now + duration)`. A session JWT whose own `exp` has passed is accepted here while its signature is good and its session alive.",
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
                    "description": "The session is alive; a fresh session JWT.",
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
                  "413": {
                    "$ref": "#/components/responses/PayloadTooLarge"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                    "description": "The session ended, with every device token it registered.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                "description": "Binds the push token to the calling session. A token already bound elsewhere moves to this session. A session that ends (revoke, expiry, sign-out, erasure) takes its device tokens with it.",
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/SessionUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                    "description": "The profiles with this external ID (at most one).",
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
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
                  }
                }
              }
            },
            "/v1/admin/project": {
              "get": {
                "operationId": "getProject",
                "summary": "The project's settings",
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
                    "description": "The settings.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ProjectSettings"
                        }
                      }
                    }
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                    "description": "The settings after the change.",
                    "headers": {
                      "X-Request-Id": {
                        "$ref": "#/components/headers/X-Request-Id"
                      }
                    },
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ProjectSettings"
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
                  }
                }
              }
            },
            "/v1/admin/identity-secrets": {
              "post": {
                "operationId": "createIdentitySecret",
                "summary": "Create an identity secret",
                "tags": [
                  "Admin"
                ],
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
                          "kid": "$response.body#/kid"
                        },
                        "description": "Retires this secret."
                      }
                    }
                  },
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                  "400": {
                    "$ref": "#/components/responses/InvalidRequest"
                  },
                  "401": {
                    "$ref": "#/components/responses/ApiKeyUnauthorized"
                  },
                  "404": {
                    "$ref": "#/components/responses/NotFound"
                  },
                  "429": {
                    "$ref": "#/components/responses/RateLimited"
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
                    "description": "Prometheus text exposition format.",
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
                "description": "The project's publishable key, `pk_` followed by base64url. Public: it ships in the app binary. Grants the project's public endpoints (anonymous start, identify)."
              },
              "secretKey": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "sk_…",
                "description": "The project's secret key, `sk_` followed by base64url. Held by the app's backend only. Grants the admin endpoints of its own project; another project's resources answer 404."
              },
              "sessionToken": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "st_…",
                "description": "An opaque session token, `st_` followed by the base64url of at least 256 random bits. Returned when a session opens; the server stores only its SHA-256. Grants the session and private endpoints while the session is alive."
              },
              "sessionJWT": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "A session JWT: compact JWS, ES256, header `typ: session+jwt` and `kid`, claims `iss`, `aud` (project ID), `sub` (profile ID), `sid` (session ID), `exp` (5 minutes after issue), `iat`, `nbf`, `kind`, `external_id`. Verifiable offline through `GET /v1/projects/{project_id}/jwks.json`. The server accepts it only while its session is alive (it checks `sid`); `POST /v1/sessions/authenticate` also accepts one whose own `exp` has passed."
              }
            },
            "headers": {
              "X-Request-Id": {
                "description": "The request's ID, on every response; quote it when reporting a problem. It appears in the server's logs.",
                "required": true,
                "schema": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 200
                }
              },
              "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "required": true,
                "schema": {
                  "type": "integer",
                  "minimum": 0
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
                "description": "A profile ID (`usr_…`); an alias left by a merge resolves to the profile it was merged into.",
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
                "description": "A stable, machine-readable error code. Clients must tolerate codes they do not know.",
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
                  "session_not_found",
                  "session_expired",
                  "session_revoked",
                  "not_found",
                  "rate_limited"
                ]
              },
              "Timestamp": {
                "type": "string",
                "format": "date-time",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
                "description": "RFC 3339 in UTC with second precision, e.g. `2026-11-20T12:00:00Z`.",
                "examples": [
                  "2026-11-20T12:00:00Z"
                ]
              },
              "ProjectId": {
                "type": "string",
                "pattern": "^prj_[A-Za-z0-9_-]+$",
                "maxLength": 64
              },
              "ProfileId": {
                "type": "string",
                "pattern": "^usr_[A-Za-z0-9_-]+$",
                "maxLength": 64
              },
              "SessionId": {
                "type": "string",
                "pattern": "^ses_[A-Za-z0-9_-]+$",
                "maxLength": 64
              },
              "DeviceId": {
                "type": "string",
                "pattern": "^dev_[A-Za-z0-9_-]+$",
                "maxLength": 64
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
              "SessionDurationMinutes": {
                "type": "integer",
                "minimum": 5,
                "maximum": 525600,
                "description": "Session lifetime in minutes, 5 … 525600 (one year; a deliberate deviation from OWASP ASVS for apps that keep users signed in). A project may set a lower maximum. Absent: the project's default for the kind of session."
              },
              "ExternalId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]+$",
                "description": "The app's stable user ID: 1–255 characters, no control characters."
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
                    "description": "The identity token's `sub`, or the unverified user ID, or null for an anonymous profile."
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
                    "maxLength": 200
                  },
                  "avatar_url": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "format": "uri",
                    "pattern": "^https://",
                    "maxLength": 2048
                  },
                  "email": {
                    "type": [
                      "string",
                      "null"
                    ],
                    "format": "email",
                    "maxLength": 254
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
                  },
                  "updated_at": {
                    "$ref": "#/components/schemas/Timestamp"
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
                "description": "What identify did with the calling anonymous profile.",
                "properties": {
                  "outcome": {
                    "type": "string",
                    "enum": [
                      "promoted",
                      "merged",
                      "unchanged"
                    ],
                    "description": "`promoted`: no profile had this `sub`, the anonymous profile became it. `merged`: a profile had it; the anonymous profile was folded into it and kept as an alias. `unchanged`: the session already belonged to this user."
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
                "properties": {
                  "session": {
                    "$ref": "#/components/schemas/Session"
                  },
                  "session_token": {
                    "$ref": "#/components/schemas/SessionToken"
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
                  "merge": {
                    "$ref": "#/components/schemas/Merge"
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
                "pattern": "^[\\x21-\\x7E]+$",
                "description": "The APNs device token (hex) or FCM registration token."
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
                "description": "A push registration. The push token itself is returned only to the secret key.",
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
                  "token"
                ],
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
                    }
                  }
                }
              },
              "ProjectSettings": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "id",
                  "name",
                  "slug",
                  "allow_unverified_identify",
                  "require_audience",
                  "max_identity_token_lifetime_seconds",
                  "leeway_seconds",
                  "anonymous_session_minutes",
                  "identified_session_minutes"
                ],
                "properties": {
                  "id": {
                    "$ref": "#/components/schemas/ProjectId"
                  },
                  "name": {
                    "type": "string"
                  },
                  "slug": {
                    "type": "string"
                  },
                  "allow_unverified_identify": {
                    "type": "boolean"
                  },
                  "require_audience": {
                    "type": "boolean"
                  },
                  "max_identity_token_lifetime_seconds": {
                    "type": "integer",
                    "minimum": 60,
                    "maximum": 86400
                  },
                  "leeway_seconds": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 300
                  },
                  "anonymous_session_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  },
                  "identified_session_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  }
                }
              },
              "ProjectSettingsPatch": {
                "type": "object",
                "additionalProperties": false,
                "minProperties": 1,
                "properties": {
                  "allow_unverified_identify": {
                    "type": "boolean"
                  },
                  "require_audience": {
                    "type": "boolean"
                  },
                  "max_identity_token_lifetime_seconds": {
                    "type": "integer",
                    "minimum": 60,
                    "maximum": 86400
                  },
                  "leeway_seconds": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 300
                  },
                  "anonymous_session_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  },
                  "identified_session_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  }
                }
              },
              "CreatedIdentitySecret": {
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
                    "description": "The secret, shown once. The HMAC key is its UTF-8 bytes."
                  },
                  "created_at": {
                    "$ref": "#/components/schemas/Timestamp"
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
                  "kid",
                  "use",
                  "alg"
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
                    "type": "string",
                    "enum": [
                      "ok"
                    ]
                  }
                }
              },
              "AnonymousSessionRequest": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "installation_id",
                  "installation_secret"
                ],
                "properties": {
                  "installation_id": {
                    "$ref": "#/components/schemas/InstallationId"
                  },
                  "installation_secret": {
                    "type": "string",
                    "minLength": 43,
                    "maxLength": 512,
                    "pattern": "^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{4}|[A-Za-z0-9_-]{3}[AEIMQUYcgkosw048]|[A-Za-z0-9_-]{2}[AQgw])$",
                    "description": "At least 32 random bytes in canonical base64url without padding, generated and kept by the SDK. Only its SHA-256 is stored."
                  },
                  "session_duration_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  }
                }
              },
              "IdentifyWithToken": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "identity_token"
                ],
                "title": "Signed identify",
                "properties": {
                  "identity_token": {
                    "type": "string",
                    "maxLength": 8192,
                    "description": "A compact JWS (HS256) minted by the app's backend with one of the project's identity secrets."
                  },
                  "session_duration_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  }
                }
              },
              "IdentifyWithUserId": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "user_id"
                ],
                "title": "Client-asserted identify",
                "properties": {
                  "user_id": {
                    "$ref": "#/components/schemas/ExternalId"
                  },
                  "session_duration_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  }
                }
              },
              "AuthenticateRequest": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                  "session_duration_minutes": {
                    "$ref": "#/components/schemas/SessionDurationMinutes"
                  }
                }
              },
              "RegisterDeviceRequest": {
                "type": "object",
                "additionalProperties": false,
                "required": [
                  "platform",
                  "token"
                ],
                "properties": {
                  "platform": {
                    "$ref": "#/components/schemas/Platform"
                  },
                  "token": {
                    "$ref": "#/components/schemas/PushToken"
                  },
                  "environment": {
                    "allOf": [
                      {
                        "$ref": "#/components/schemas/Environment"
                      }
                    ],
                    "description": "Default `production`."
                  }
                }
              }
            },
            "responses": {
              "InvalidRequest": {
                "description": "The request is malformed: bad JSON, a missing or wrongly typed field, an unknown field, a bad parameter.",
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
                "description": "The request is malformed, or `session_duration_minutes` is outside 5 … 525600 or above the project's maximum.",
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
                "description": "No credential, an unknown key (`invalid_api_key`), or a kind of credential this endpoint does not take (`invalid_credentials`).",
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
                "description": "No credential, a kind this endpoint does not take, a bad session JWT (`invalid_credentials`), or a session that is not alive.",
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
                "description": "A bad credential or session, or an identity token that fails verification.",
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
                "description": "The project does not allow client-asserted identify.",
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
                "description": "This installation is known with another installation secret.",
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
                "description": "The calling session belongs to another identified user; sign out first.",
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
                "description": "Too many requests.",
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
              }
            }
          }
        }
        """#
}
