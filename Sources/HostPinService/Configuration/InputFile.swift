import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Checks on files named on the command line, made while parsing so that a bad one is a usage error
/// (exit 2) before any query is sent.
package enum InputFile {
    /// Checks that `path` opens for reading and is not a directory (`open(2)` accepts a directory;
    /// reading it fails later).
    ///
    /// - Throws: ``UsageError/unreadableFile(option:path:reason:)`` with the system's reason.
    package static func checkReadable(_ path: String, option: String) throws(UsageError) {
        guard !path.isEmpty else { throw .unreadableFile(option: option, path: path, reason: "the file name is empty") }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw .unreadableFile(option: option, path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        if isDirectory(descriptor) {
            throw .unreadableFile(option: option, path: path, reason: String(cString: strerror(EISDIR)))
        }
    }

    /// Checks that standard input is open for reading and is not a directory (`< /tmp`).
    ///
    /// - Throws: ``UsageError/unreadableStandardInput(reason:)`` with the system's reason.
    package static func checkStandardInput() throws(UsageError) {
        let flags = fcntl(0, F_GETFL)
        if flags == -1 || flags & O_ACCMODE == O_WRONLY {
            throw .unreadableStandardInput(reason: String(cString: strerror(flags == -1 ? errno : EBADF)))
        }
        if isDirectory(0) { throw .unreadableStandardInput(reason: String(cString: strerror(EISDIR))) }
    }

    private static func isDirectory(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
