// swift-tools-version:6.0
// HostPin's libFuzzer targets: a package of its own, built only by `scripts/fuzz` (see the README,
// "Fuzzing and sanitizers"), so that `swift build` and `swift test` of the main package never meet
// `-sanitize=fuzzer`, whose runtime brings its own `main`.
//
// Each target is an executable whose one file defines `LLVMFuzzerTestOneInput` (and no `main`: a single
// file not named main.swift is compiled with `-parse-as-library`). They reach the parsers' internal types
// with `@testable import`, so scripts/fuzz builds everything with `-enable-testing` (in release, so the
// fuzzer runs optimised code, preconditions kept).
import PackageDescription

// The main package, through the symlink Fuzz/HostPin -> `..`: a path dependency's identity is its last path
// component, and the repository's own folder name ("fuzz" in a clone named so) could be this package's.
let hostPin = "hostpin"

/// Fuzz target name → the main package's products it imports.
let targets: [(name: String, products: [String])] = [
    ("FuzzHostName", ["HostPin"]),
    ("FuzzUpstream", ["HostPin"]),
    ("FuzzRules", ["HostPin"]),
    ("FuzzRequestHead", ["HostPinProxy"]),
    ("FuzzChunked", ["HostPinProxy"]),
    ("FuzzResponseHead", ["HostPinProxy"]),
    ("FuzzDNSReply", ["HostPin"]),
    ("FuzzRedirect", ["HostPin", "HostPinURL"]),
    ("FuzzDNSStub", ["HostPin", "HostPinDNS"]),
    ("FuzzCacheFile", ["HostPin"]),
    ("FuzzHijackList", ["HostPin"]),
    ("FuzzConfig", ["HostPin", "HostPinService"]),
    ("FuzzDNSSECValidator", ["HostPin"]),
]

let package = Package(
    name: "HostPinFuzz",
    dependencies: [
        .package(path: "HostPin"),
    ],
    targets: [
        .target(name: "FuzzSupport"),
    ] + targets.map { target in
        .executableTarget(
            name: target.name,
            dependencies: ["FuzzSupport"] + target.products.map { .product(name: $0, package: hostPin) }
        )
    },
    swiftLanguageModes: [.v6]
)
