import HostPin

extension Upstream {
    /// Parses the value of an upstream option: `--server` takes every form (`IP:PORT`, `[IPv6]:PORT`,
    /// `https://NAME[:PORT]/PATH`, `tls://NAME[:PORT]`), `--local` plain `IP:PORT` only (`plainOnly`). A bad
    /// one is a usage error that names the option and says why.
    package static func commandLineValue(_ text: String, option: String, plainOnly: Bool = false) throws(UsageError) -> Upstream {
        do throws(Upstream.ParseError) {
            return plainOnly ? try Upstream.parsePlain(text) : try Upstream.parse(text)
        } catch {
            throw .invalidValue(option: option, reason: error.description)
        }
    }
}
