// swift-tools-version:6.2
import PackageDescription

// libFuzzer targets for TesseraTokens and TesseraAttest. Each target compiles the module's sources itself (through the
// `TesseraTokens` symlink in its folder), so the entry point reaches internal helpers too. Build and run
// with `scripts/fuzz` (`--sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address`): libFuzzer
// supplies `main`, each target exports `LLVMFuzzerTestOneInput`.
let package = Package(
    name: "TesseraFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2")
    ],
    targets: [
        .executableTarget(
            name: "FuzzIdentityToken",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "IdentityToken",
            exclude: ["TesseraTokens/TesseraTokens.docc"]
        ),
        .executableTarget(
            name: "FuzzSessionJWT",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "SessionJWT",
            exclude: ["TesseraTokens/TesseraTokens.docc"]
        ),
        // TesseraAttest's parsing (the CBOR reader, attestation object, authenticator data, assertion
        // check), compiled through the `Parsing` symlink into Server/Sources/TesseraAttest.
        .executableTarget(
            name: "FuzzAppAttest",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "AppAttest"
        ),
        .executableTarget(
            name: "FuzzJWKS",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            path: "JWKS",
            exclude: ["TesseraTokens/TesseraTokens.docc"]
        ),
    ]
)

for target in package.targets {
    target.swiftSettings = [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
