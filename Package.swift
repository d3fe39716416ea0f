// swift-tools-version:6.0
import PackageDescription

/// Async functions of the event-loop targets run on their caller's executor (SE-0461) instead of hopping
/// to the generic one at every call and return: a proxy connection's task already runs on the loop
/// (its executor preference), and each hop was a `swift_task_switch` that looked the preference up under
/// the task's status lock (3.7 % of a busy proxy's time). None of these targets' async functions blocks a thread.
let nonsendingByDefault: [SwiftSetting] = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

let package = Package(
    name: "HostPin",
    products: [
        .library(name: "HostPin", targets: ["HostPin"]),
        .library(name: "HostPinURL", targets: ["HostPinURL"]),
        .library(name: "HostPinProxy", targets: ["HostPinProxy"]),
        .library(name: "HostPinDNS", targets: ["HostPinDNS"]),
        .library(name: "HostPinNet", targets: ["HostPinNet"]),
        .library(name: "HostPinService", targets: ["HostPinService"]),
        .executable(name: "hostpin", targets: ["HostPinCLI"]),
    ],
    targets: [
        .systemLibrary(
            name: "CAres",
            pkgConfig: "libcares",
            providers: [.apt(["libc-ares-dev"])]
        ),
        .systemLibrary(
            name: "CIDN2",
            pkgConfig: "libidn2",
            providers: [.apt(["libidn2-dev"])]
        ),
        .systemLibrary(
            name: "CLDNS",
            pkgConfig: "ldns",
            providers: [.apt(["libldns-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // No pkgConfig: hiredis.pc's cflags carry -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a
        // warning; its headers are in /usr/include/hiredis and the module map links the library.
        .systemLibrary(
            name: "CHiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        .target(
            name: "HostPin",
            dependencies: ["CAres", "CIDN2", "CLDNS", "CCurl", "COpenSSL"]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "HostPinURL",
            dependencies: ["HostPin", "CCurl"]
        ),
        .systemLibrary(name: "CEpoll"),
        .target(
            name: "HostPinNet",
            dependencies: ["HostPin", "CEpoll"],
            swiftSettings: nonsendingByDefault
        ),
        .target(
            name: "HostPinProxy",
            dependencies: ["HostPin", "HostPinNet"],
            swiftSettings: nonsendingByDefault
        ),
        .target(
            name: "HostPinDNS",
            dependencies: ["HostPin", "HostPinNet", "CLDNS"]
        ),
        .target(
            name: "HostPinService",
            dependencies: ["HostPin", "HostPinNet", "HostPinProxy", "HostPinDNS", "CHiredis"]
        ),
        .executableTarget(
            name: "HostPinCLI",
            dependencies: ["HostPin", "HostPinURL", "HostPinProxy", "HostPinDNS", "HostPinService"],
            plugins: ["BuildCommit"]
        ),
        .plugin(name: "BuildCommit", capability: .buildTool()),
        .target(
            name: "HostPinTestSupport",
            dependencies: ["HostPin"],
            path: "Tests/HostPinTestSupport"
        ),
        .testTarget(
            name: "HostPinTests",
            dependencies: ["HostPin", "HostPinTestSupport", "CLDNS"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "HostPinURLTests",
            dependencies: ["HostPinURL", "HostPinTestSupport"]
        ),
        .testTarget(
            name: "HostPinProxyTests",
            dependencies: ["HostPinProxy", "HostPinNet", "HostPinTestSupport"]
        ),
        .testTarget(
            name: "HostPinDNSTests",
            dependencies: ["HostPinDNS", "HostPinNet", "HostPinTestSupport", "CLDNS"]
        ),
        .testTarget(
            name: "HostPinServiceTests",
            dependencies: ["HostPinService", "HostPin", "HostPinNet", "HostPinTestSupport"]
        ),
        .testTarget(
            name: "HostPinCLITests",
            dependencies: ["HostPinTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
