// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "TesseraServer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TesseraServer", targets: ["TesseraServer"]),
        .library(name: "TesseraAttest", targets: ["TesseraAttest"]),
        .executable(name: "tessera", targets: ["TesseraCLI"]),
    ],
    dependencies: [
        .package(name: "Tessera", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Tracing (opt-in): the OTLP/HTTP exporter only; the default traits would also build gRPC.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .target(name: "CTesseraSQLite"),
        // App Attest verification, free of HTTP and storage so it can be fuzzed and benchmarked alone.
        .target(
            name: "TesseraAttest",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .target(
            name: "TesseraServer",
            dependencies: [
                "CTesseraSQLite",
                "TesseraAttest",
                .product(name: "TesseraTokens", package: "Tessera"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            plugins: ["OpenAPIEmbedPlugin"]
        ),
        // Compiles Server/openapi.json into TesseraServer at build time (no generated file in git).
        .plugin(name: "OpenAPIEmbedPlugin", capability: .buildTool(), dependencies: ["OpenAPIEmbed"]),
        .executableTarget(name: "OpenAPIEmbed", path: "Plugins/OpenAPIEmbed"),
        .executableTarget(
            name: "TesseraCLI",
            dependencies: [
                "TesseraServer",
                .product(name: "TesseraTokens", package: "Tessera"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "AppAttestBenchmark",
            dependencies: ["TesseraAttest", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/AppAttest"
        ),
        .executableTarget(
            name: "HelloWorld",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "Benchmarks/HelloWorld"
        ),
        // Child processes for the tests without Foundation's Process (ChildProcess.swift), loopback ports.
        .target(name: "TesseraTestProcess", path: "Tests/Support/TesseraTestProcess"),
        .testTarget(
            name: "TesseraServerTests",
            dependencies: [
                "TesseraServer",
                "TesseraAttest",
                "TesseraTestProcess",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "TesseraTokens", package: "Tessera"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "TesseraAttestTests",
            dependencies: [
                "TesseraAttest",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TesseraServer",
                "TesseraTestProcess",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Tessera", package: "Tessera"),
                .product(name: "TesseraTokens", package: "Tessera"),
                "TesseraAttest",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
    ]
)

for target in package.targets where target.name != "CTesseraSQLite" && target.type != .plugin {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
