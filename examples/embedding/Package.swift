// swift-tools-version:6.0
// An example of embedding HostPin's service (README.md, "Library"): a program of its own that runs the DNS
// stub and the forward proxy on one cache from a configuration built in code, reloads it with a changed
// rule, and stops it. A package of its own, like Fuzz/ and Benchmarks/, built by CI (.ci/run):
// `swift build --package-path examples/embedding`, then `examples/embedding/.build/debug/EmbeddedService IP:PORT`.
import PackageDescription

// The main package, through the symlink examples/embedding/HostPin -> `../..`: a path dependency's identity is
// its last path component, so the link's name is the one products are named from.
let package = Package(
    name: "EmbeddedService",
    dependencies: [
        .package(path: "HostPin"),
    ],
    targets: [
        .executableTarget(
            name: "EmbeddedService",
            dependencies: [
                .product(name: "HostPin", package: "hostpin"),
                .product(name: "HostPinNet", package: "hostpin"),
                .product(name: "HostPinService", package: "hostpin"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
