import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a whole regular file of at most a given size, refusing a larger one without reading it.
public enum BoundedFile {
    /// The contents of the regular file at `path`, at most `limit` bytes.
    ///
    /// The size is checked with `fstat` on the open file before reading, and reading stops after
    /// `limit + 1` bytes anyway, so a file that grows meanwhile cannot make it read more.
    ///
    /// - Throws: ``FileProblem`` saying why the file cannot be used.
    public static func contents(of path: String, limit: Int) throws(FileProblem) -> Data {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            let error = errno
            throw error == ENOENT ? .missing : .unreadable(String(cString: strerror(error)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        guard status.st_size <= limit else { throw .tooLarge(limit: limit) }
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            contents.append(contentsOf: buffer[..<count])
            if contents.count > limit { throw .tooLarge(limit: limit) }
        }
        return contents
    }
}
