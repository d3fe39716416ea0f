import Foundation

/// Checks that a file named in a configuration file can be used, before anything runs, so that the
/// problem is reported at its key path rather than when the file is first needed.
package enum FileAccess {
    /// Why `path` cannot be opened for reading as a file, or `nil`.
    package static func unreadable(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return String(cString: strerror(EISDIR)) }
        return nil
    }

    /// Why a file cannot be written at `path` (its folder is missing, not a folder, or not writable: a
    /// read-only file system, no permission), or `nil`. The file itself is written whole to a temporary
    /// file beside it and renamed, so the folder is what must be writable.
    package static func unwritableFolder(of path: String) -> String? {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var status = stat()
        guard stat(folder, &status) == 0 else { return "its folder \(folder): \(String(cString: strerror(errno)))" }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "its folder \(folder) is not a folder" }
        guard access(folder, W_OK) == 0 else { return "its folder \(folder) is not writable: \(String(cString: strerror(errno)))" }
        return nil
    }

    /// A short reason for a file error, without a final period (the sentences around it add their own):
    /// the POSIX message when there is one, never Foundation's "NSCocoaErrorDomain error 256".
    package static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        if nsError.domain == NSCocoaErrorDomain {
            switch nsError.code {
            case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return "No such file or directory"
            case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "Permission denied"
            case NSFileReadTooLargeError: return "File too large"
            default: return "it could not be read or written"
            }
        }
        var text = nsError.localizedDescription
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
