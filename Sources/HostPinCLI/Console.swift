import Foundation

/// Writing to the standard streams. Standard output goes through `print` (buffered, flushed at exit);
/// standard error is written unbuffered through `FileHandle`, because the C `stderr` global is a
/// mutable variable that Swift 6 will not share across concurrency domains.
enum Console {
    /// Prints `line` and a newline to standard output.
    static func out(_ line: String) {
        print(line)
    }

    /// Writes `line` and a newline to standard error.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
