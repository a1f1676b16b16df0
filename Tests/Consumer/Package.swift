// swift-tools-version: 6.0
// A backend team's package outside EntitlementEngine, on its public API alone: `.ci/run` builds it and runs
// its tests, so what the README and DocC show an app writing stays possible when declarations become `package`.
import PackageDescription

let package = Package(
    name: "MyBackend",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "EntitlementEngine", path: "../..")],
    targets: [
        .target(name: "MyBackend", dependencies: [
            .product(name: "EntitlementEngine", package: "EntitlementEngine"),
            .product(name: "EntitlementHTTP", package: "EntitlementEngine"),
            .product(name: "EntitlementRedis", package: "EntitlementEngine"),
            .product(name: "EntitlementHost", package: "EntitlementEngine"),
        ]),
        .testTarget(name: "MyBackendTests", dependencies: [
            "MyBackend",
            .product(name: "EntitlementTesting", package: "EntitlementEngine"),
        ]),
    ]
)
