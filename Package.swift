// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tessera",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Tessera", targets: ["Tessera"]),
        .library(name: "TesseraTokens", targets: ["TesseraTokens"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0")
    ],
    targets: [
        .target(
            name: "TesseraTokens",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "Tessera",
            dependencies: [
                "TesseraTokens",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        .executableTarget(
            name: "TesseraTokensBenchmark",
            dependencies: ["TesseraTokens", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/TesseraTokensBenchmark"
        ),
        .executableTarget(
            name: "TesseraStartBenchmark",
            dependencies: ["Tessera", "TesseraTokens"],
            path: "Benchmarks/TesseraStartBenchmark"
        ),
        .executableTarget(
            name: "tessera-device",
            dependencies: ["Tessera", "TesseraTokens"],
            path: "Examples/TesseraDevice"
        ),
        .testTarget(
            name: "TesseraTokensTests",
            dependencies: ["TesseraTokens", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(name: "TesseraTests", dependencies: ["Tessera"]),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.swiftLanguageMode(.v6))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
