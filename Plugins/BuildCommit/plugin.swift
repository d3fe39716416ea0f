import Foundation
import PackagePlugin

/// Records the commit a build is made from, for `hostpin --version`: before every build of the target
/// that uses it, writes `BuildCommit.swift` with `enum BuildCommit { static let id = "…" }` — `git
/// rev-parse HEAD` of the package's folder, `+ uncommitted changes` after it when the work tree differs
/// from HEAD, or `unknown` outside git (a source tarball) or without git. The file is rewritten only when
/// that text changes, so an unchanged commit recompiles nothing.
///
/// A prebuild command rather than a compile-time define: SwiftPM passes no value into Swift code, and a
/// prebuild command is the one plugin command that runs on every build, without declared inputs.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = """
            set -u
            package=$1 out=$2/BuildCommit.swift
            mkdir -p "$2"
            if commit=$(git -C "$package" rev-parse --verify --quiet HEAD 2>/dev/null) && [ -n "$commit" ]; then
                git -C "$package" diff --quiet HEAD -- 2>/dev/null || commit="$commit + uncommitted changes"
            else
                commit=unknown
            fi
            text="// Written by Plugins/BuildCommit before each build; not in git.
            enum BuildCommit {
                /// The commit this binary was built from (git rev-parse HEAD), or unknown outside git.
                static let id = \\"$commit\\"
            }"
            if [ "$(cat "$out" 2>/dev/null)" != "$text" ]; then printf '%s\\n' "$text" >"$out"; fi
            """
        return [.prebuildCommand(displayName: "Recording the commit for hostpin --version",
                                 executable: URL(filePath: "/bin/sh"),
                                 arguments: ["-c", script, "sh", context.package.directoryURL.path(), output.path()],
                                 outputFilesDirectory: output)]
    }
}
