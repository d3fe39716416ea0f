import Foundation
import HostPinTestSupport
import Testing

/// `scripts/package`: the .deb it builds from the release build passes lintian without an error or a warning, holds exactly the files listed, installs into
/// a throw-away root where `hostpin --version` runs, and leaves nothing there once purged.
///
/// Slow (lintian; a release build first): scripts/test runs it in a phase of its own, after
/// `swift build -c release --static-swift-stdlib`, and the test packages that binary (`--binary`): while
/// `swift test` runs it holds SwiftPM's lock on .build, so the script's own swift build would wait forever.
@Suite(.serialized) struct DebianPackageTests {
    static let script = Lab.repositoryRoot.appendingPathComponent("scripts/package").path
    /// dpkg and lintian look for their helpers (ldconfig, start-stop-daemon) on PATH; swift stays on it.
    static let environment = ["PATH": "/usr/local/sbin:/usr/sbin:/sbin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    /// The release build scripts/test makes before this phase.
    static let release = Lab.repositoryRoot.appendingPathComponent(".build/release/hostpin").path
    static let canRun = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-shlibdeps")
        && FileManager.default.isExecutableFile(atPath: release)

    /// Every file and folder of the package, as `dpkg-deb -c` lists them.
    static let contents = [
        "./", "./lib/", "./lib/systemd/", "./lib/systemd/system/", "./lib/systemd/system/hostpin.service",
        "./usr/", "./usr/bin/", "./usr/bin/hostpin", "./usr/share/", "./usr/share/bash-completion/",
        "./usr/share/bash-completion/completions/", "./usr/share/bash-completion/completions/hostpin",
        "./usr/share/doc/", "./usr/share/doc/hostpin/", "./usr/share/doc/hostpin/changelog.gz",
        "./usr/share/doc/hostpin/copyright", "./usr/share/doc/hostpin/examples/",
        "./usr/share/doc/hostpin/examples/hijack-list.txt", "./usr/share/doc/hostpin/examples/hostpin.json",
        "./usr/share/man/", "./usr/share/man/man1/", "./usr/share/man/man1/hostpin.1.gz", "./usr/share/man/man5/",
        "./usr/share/man/man5/hostpin.json.5.gz",
    ]

    private static func temporaryFolder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func sh(_ command: String, _ arguments: [String] = []) async throws -> ProcessRunner.Result {
        try await ProcessRunner.run("/bin/sh", ["-c", command, "sh"] + arguments, environment: environment)
    }

    @Test(.enabled(if: canRun, "needs root (dpkg --root), lintian and dpkg-dev (scripts/bootstrap --test) and the release build"))
    func packageInstallsRunsAndPurgesCleanly() async throws {
        let work = try Self.temporaryFolder("package")
        defer { try? FileManager.default.removeItem(at: work) }
        let built = try await ProcessRunner.run(Self.script, ["--output", work.appendingPathComponent("out").path,
                                                              "--binary", Self.release], environment: Self.environment)
        try #require(built.status == 0, "\(built.standardError.suffix(2000))")
        let deb = built.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb.hasSuffix("/out/hostpin_0.1.0_\(try await Self.sh("dpkg --print-architecture").standardOutput.dropLast()).deb"))

        // What it holds, and what it needs.
        let listing = try await Self.sh("dpkg-deb -c \"$1\"", [deb])
        #expect(listing.standardOutput.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
                    == Self.contents)
        let fields = try await Self.sh("dpkg-deb -f \"$1\" Package Version Depends", [deb]).standardOutput
        #expect(fields.contains("Package: hostpin\nVersion: 0.1.0\n"))
        for library in ["libc-ares2", "libldns3", "libcurl4", "libidn2-0", "libhiredis0.14", "libssl3", "libc6"] {
            #expect(fields.contains(library), "Depends lacks \(library): \(fields)")
        }
        #expect(!fields.contains("swift"), "\(fields)")

        // lintian: no error, no warning (the info tags are explained in README.md, "Install from a .deb").
        let lintian = try await Self.sh("lintian --fail-on none \"$1\" 2>&1 | grep -v 'running with root privileges'", [deb])
        let tags = lintian.standardOutput.split(separator: "\n")
        #expect(tags.filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") } == [], "\(lintian.standardOutput)")

        // Installed into a throw-away root: no maintainer scripts to run, dependencies not installed there.
        let root = work.appendingPathComponent("root")
        let admin = root.appendingPathComponent("var/lib/dpkg")
        for folder in ["updates", "info"] {
            try FileManager.default.createDirectory(at: admin.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        _ = FileManager.default.createFile(atPath: admin.appendingPathComponent("status").path, contents: Data())
        let dpkg = "dpkg --root=\"$1\" --admindir=\"$1/var/lib/dpkg\" --log=\"$2\" --force-depends"
        let log = work.appendingPathComponent("dpkg.log").path
        let install = try await Self.sh("\(dpkg) --install \"$3\"", [root.path, log, deb])
        #expect(install.status == 0, "\(install.standardError)")
        let version = try await ProcessRunner.run(root.appendingPathComponent("usr/bin/hostpin").path, ["--version"])
        #expect(version.status == 0)
        let lines = version.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "hostpin 0.1.0")
        #expect(lines.count == 5)
        #expect(lines.dropFirst().first?.wholeMatch(of: /commit ([0-9a-f]{40}( \+ uncommitted changes)?|unknown)/) != nil, "\(lines)")
        #expect(lines.dropFirst(2).map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["c-ares", "ldns", "libcurl"])
        // The installed manual pages render without a warning; the unit names /usr/bin/hostpin.
        for page in ["usr/share/man/man1/hostpin.1.gz", "usr/share/man/man5/hostpin.json.5.gz"] {
            let man = try await Self.sh("MANWIDTH=80 man -l \"$1\" >/dev/null", [root.appendingPathComponent(page).path])
            #expect(man.status == 0 && man.standardError == "", "\(page): \(man.standardError)")
        }
        let unit = try String(contentsOf: root.appendingPathComponent("lib/systemd/system/hostpin.service"), encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/hostpin serve --config /etc/hostpin/config.json\n"))
        #expect(unit.contains("\nDocumentation=man:hostpin(1) man:hostpin.json(5)\n"))
        let completion = try await ProcessRunner.run("/bin/bash", ["-c", """
            source "$0/usr/share/bash-completion/completions/hostpin"
            COMP_WORDS=(hostpin serve --log-format ''); COMP_CWORD=3; _hostpin; echo "${COMPREPLY[*]}"
            """, root.path])
        #expect(completion.standardOutput == "text json\n", "\(completion.standardError)")

        // Purged: nothing left but dpkg's own database.
        let purge = try await Self.sh("\(dpkg) --purge hostpin", [root.path, log])
        #expect(purge.status == 0, "\(purge.standardError)")
        let left = try await Self.sh("cd \"$1\" && find . -mindepth 1 ! -path './var' ! -path './var/lib' ! -path './var/lib/dpkg' "
                               + "! -path './var/lib/dpkg/*' | sort", [root.path])
        #expect(left.standardOutput == "")
        let owned = try await Self.sh("ls \"$1/var/lib/dpkg/info\" | grep hostpin; " + dpkg.replacingOccurrences(of: " --force-depends", with: "")
                                + " --status hostpin 2>&1 | head -n 3", [root.path, log])
        #expect(!owned.standardOutput.contains("hostpin.list"), "\(owned.standardOutput)")
        #expect(!owned.standardOutput.contains("Status: install"), "\(owned.standardOutput)")
    }
}

/// scripts/package's bad input: refused at once, before minutes of building.
@Suite struct PackageScriptTests {
    @Test func outputFolderThatCannotBeWrittenIsAClearError() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-package-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data("not a folder".utf8))
        defer { try? FileManager.default.removeItem(at: file) }
        for output in [file.appendingPathComponent("out").path, file.path, "/proc/hostpin-package"] {
            let result = try await ProcessRunner.run(DebianPackageTests.script, ["--output", output])
            #expect(result.status == 1, "\(output)")
            #expect(result.standardOutput == "")
            #expect(result.standardError.hasPrefix("package: cannot "), "\(output): \(result.standardError)")
            #expect(result.standardError.hasSuffix(" the output folder \(output)\n"), "\(output): \(result.standardError)")
            #expect(!result.standardError.contains("release build"), "it started building: \(result.standardError)")
        }
    }

    @Test func unknownArgumentIsAUsageError() async throws {
        let result = try await ProcessRunner.run(DebianPackageTests.script, ["--outptu", "x"])
        #expect(result.status == 2)
        #expect(result.standardError == "package: unknown argument '--outptu' (usage: scripts/package [--output DIR] [--binary FILE])\n")
    }
}
