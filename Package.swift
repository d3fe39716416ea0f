// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "HostPin",
    products: [
        .library(name: "HostPin", targets: ["HostPin"]),
        .library(name: "HostPinURL", targets: ["HostPinURL"]),
        .library(name: "HostPinProxy", targets: ["HostPinProxy"]),
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
        .target(
            name: "HostPin",
            dependencies: ["CAres", "CIDN2", "CLDNS"]
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
        .target(
            name: "HostPinProxy",
            dependencies: ["HostPin"]
        ),
        .executableTarget(
            name: "HostPinCLI",
            dependencies: ["HostPin", "HostPinURL", "HostPinProxy"]
        ),
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
            dependencies: ["HostPinProxy", "HostPinTestSupport"]
        ),
        .testTarget(
            name: "HostPinCLITests",
            dependencies: ["HostPinTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
