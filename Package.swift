// swift-tools-version: 6.0
import PackageDescription

// Zero package dependencies: the engine depends on the Swift toolchain alone
// (stdlib, Foundation, Dispatch, Synchronization, Swift Testing) and, for HTTP on Linux, on the libcurl
// FoundationNetworking links, which CEntitlementCurl opens at run time.
let package = Package(
    name: "EntitlementEngine",
    platforms: [.macOS(.v15)],
    products: [
        // What an app or a backend builds on; EntitlementEngine re-exports EntitlementCore and EntitlementV2.
        .library(name: "EntitlementEngine", targets: ["EntitlementEngine"]),
        .library(name: "EntitlementHTTP", targets: ["EntitlementHTTP"]),
        .library(name: "EntitlementRedis", targets: ["EntitlementRedis"]),
        .library(name: "EntitlementHost", targets: ["EntitlementHost"]),
        .library(name: "EntitlementProviders", targets: ["EntitlementProviders"]),
        .library(name: "EntitlementTracing", targets: ["EntitlementTracing"]),
        // For your tests, not API: the simulator, the scenario language, the simulator on HTTP and its server.
        .library(
            name: "EntitlementTesting",
            targets: ["EntitlementSimulator", "EntitlementScenarios", "EntitlementSimulatorServer", "EntitlementHTTPServer"]),
        .executable(name: "entitle", targets: ["entitle"]),
    ],
    dependencies: [],
    targets: [
        // Package-only: percent and form coding, base64, hex, SHA-256/HMAC, markup escaping, the seeded
        // generator — one of each, shared by the modules, in no product's public API.
        .target(name: "EntitlementSupport"),
        // REST API V2 on the wire, both directions: requests, answers, headers, errors, JSON, times.
        .target(name: "EntitlementV2", dependencies: ["EntitlementSupport"]),
        // The pure machine and the values it speaks: no I/O, clock or randomness.
        .target(name: "EntitlementCore", dependencies: ["EntitlementSupport", "EntitlementV2"]),
        .target(name: "EntitlementEngine", dependencies: ["EntitlementSupport", "EntitlementV2", "EntitlementCore"]),
        // Tools over a session: traces (record, replay, conceal, transcripts) and the charts of the table.
        .target(name: "EntitlementTracing", dependencies: ["EntitlementSupport", "EntitlementEngine"]),
        .target(name: "EntitlementSimulator", dependencies: ["EntitlementSupport", "EntitlementEngine"]),
        // libcurl's multi interface, opened at run time from the libcurl FoundationNetworking links (no headers, no link flag).
        .target(name: "CEntitlementCurl"),
        .target(name: "EntitlementHTTP", dependencies: ["EntitlementSupport", "EntitlementEngine", "CEntitlementCurl"]),
        .target(name: "EntitlementHTTPServer"),
        .target(name: "EntitlementRedis", dependencies: ["EntitlementSupport", "EntitlementEngine"]),
        .target(name: "EntitlementHost", dependencies: ["EntitlementSupport", "EntitlementEngine"]),
        .target(name: "EntitlementProviders", dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementHTTP"]),
        .target(
            name: "EntitlementSimulatorServer", dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementSimulator", "EntitlementHTTPServer"]),
        .target(
            name: "EntitlementScenarios",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementSimulator", "EntitlementHTTP", "EntitlementHTTPServer", "EntitlementSimulatorServer",
                "EntitlementProviders",
            ]),
        .target(
            name: "EntitlementFuzzing",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementScenarios", "EntitlementHTTPServer", "EntitlementSimulatorServer",
                "EntitlementRedis", "EntitlementProviders",
            ]),
        // What every command shares: exit statuses (sysexits), standard error, stopping on a signal.
        .target(name: "EntitlementCommandLine"),
        // The benchmarks `entitle bench` runs (kept out of the library and of the command-line parsing).
        .target(
            name: "EntitlementBenchmarks",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementScenarios",
                "EntitlementHTTP", "EntitlementHTTPServer", "EntitlementSimulatorServer", "EntitlementRedis", "EntitlementHost",
            ]),
        // The fleet harness `entitle fleet` runs: node processes on a real Redis under seeded faults.
        .target(
            name: "EntitlementFleet",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementCommandLine", "EntitlementSimulator", "EntitlementHTTP",
                "EntitlementHTTPServer", "EntitlementSimulatorServer", "EntitlementRedis", "EntitlementHost", "EntitlementProviders",
            ]),
        .executableTarget(
            name: "entitle",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementScenarios", "EntitlementFuzzing", "EntitlementHTTP",
                "EntitlementHTTPServer", "EntitlementSimulatorServer", "EntitlementRedis", "EntitlementHost", "EntitlementProviders",
                "EntitlementBenchmarks", "EntitlementCommandLine", "EntitlementFleet",
            ]),
        // For this package's test targets only: the `.backgroundThread` trait.
        .target(name: "EntitlementTestSupport", dependencies: ["EntitlementEngine"], path: "Tests/EntitlementTestSupport"),
        .testTarget(
            name: "EntitlementEngineTests", dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementFuzzing", "EntitlementTestSupport"]),
        .testTarget(name: "EntitlementSupportTests", dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementSimulator", "EntitlementTestSupport"]),
        .testTarget(name: "EntitlementV2Tests", dependencies: ["EntitlementSupport", "EntitlementV2", "EntitlementTestSupport"]),
        .testTarget(name: "EntitlementCoreTests", dependencies: ["EntitlementSupport", "EntitlementCore", "EntitlementEngine", "EntitlementSimulator", "EntitlementFuzzing", "EntitlementTestSupport"]),
        .testTarget(
            name: "EntitlementTracingTests",
            dependencies: ["EntitlementSupport", "EntitlementCore", "EntitlementV2", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementTestSupport"]),
        .testTarget(name: "EntitlementSimulatorTests", dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementSimulator", "EntitlementTestSupport"]),
        .testTarget(
            name: "StateChartTests", dependencies: ["EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementScenarios", "EntitlementTestSupport"]),
        .testTarget(
            name: "EntitlementFuzzingTests",
            dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementScenarios", "EntitlementFuzzing", "EntitlementTestSupport"]),
        .testTarget(name: "EntitlementHTTPServerTests", dependencies: ["EntitlementSupport", "EntitlementHTTPServer", "EntitlementTestSupport"]),
        .testTarget(
            name: "EntitlementProvidersTests",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementProviders", "EntitlementHTTP", "EntitlementHTTPServer", "EntitlementSimulator",
                "EntitlementSimulatorServer", "EntitlementScenarios", "EntitlementTestSupport",
            ]),
        .testTarget(
            name: "EntitlementHostTests", dependencies: ["EntitlementEngine", "EntitlementTracing", "EntitlementHost", "EntitlementSimulator", "EntitlementFuzzing", "EntitlementTestSupport"]),
        .testTarget(
            name: "EntitlementRedisTests", dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementRedis", "EntitlementSimulator", "EntitlementHost", "EntitlementTestSupport"]),
        .testTarget(
            name: "EntitlementHTTPTests",
            dependencies: [
                "EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementHTTP", "EntitlementHTTPServer", "EntitlementSimulator", "EntitlementSimulatorServer",
                "EntitlementScenarios", "EntitlementProviders", "EntitlementTestSupport",
            ]),
        .testTarget(
            name: "EntitlementScenariosTests",
            dependencies: ["EntitlementSupport", "EntitlementEngine", "EntitlementTracing", "EntitlementSimulator", "EntitlementScenarios", "EntitlementTestSupport"]),
        .testTarget(name: "EntitlementBenchmarksTests", dependencies: ["EntitlementBenchmarks", "EntitlementTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
