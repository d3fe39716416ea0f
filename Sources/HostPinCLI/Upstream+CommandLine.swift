import HostPin

extension Upstream {
    /// Parses the value of an `IP:PORT` option (`--server`, `--local`); a bad one is a usage error that
    /// names the option and says why.
    static func commandLineValue(_ text: String, option: String) throws(UsageError) -> Upstream {
        do throws(Upstream.ParseError) {
            return try Upstream.parse(text)
        } catch {
            throw .invalidValue(option: option, reason: error.description)
        }
    }
}
