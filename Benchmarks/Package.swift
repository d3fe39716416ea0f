// swift-tools-version:6.0
// HostPin's benchmark runner: a package of its own so that `swift test` of the main package never builds it.
// Run everything with `Benchmarks/run` (see Benchmarks/README.md).
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, which depends on where the repository was cloned.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let hostPin = root.lastPathComponent.lowercased()

let package = Package(
    name: "HostPinBenchmarks",
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "HostPinBench",
            dependencies: [
                .product(name: "HostPin", package: hostPin),
                .product(name: "HostPinURL", package: hostPin),
            ],
        ),
    ],
    swiftLanguageModes: [.v6]
)
