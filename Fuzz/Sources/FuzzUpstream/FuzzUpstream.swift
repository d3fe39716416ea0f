import FuzzSupport
import HostPin

/// Every parser of the command line's upstream options on any text: `Upstream.parse` (`--server`, plain
/// and encrypted), `Upstream.parsePlain` (`--local`), `EncryptedUpstream.parse`, `UpstreamBootstrap.parse`
/// (`--bootstrap`), `UpstreamPin.parse` (`--pin`) and `IPAddress`. Never a crash, and what one accepts
/// prints back (`description`) to text it parses to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUpstream(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    if let address = IPAddress(text) {
        property(IPAddress(address.description) == address, "\(text.debugDescription) → \(address) does not parse back")
    }
    if let upstream = try? Upstream.parse(text) {
        property((try? Upstream.parse(upstream.description)) == upstream,
                 "\(text.debugDescription) → \(upstream.description.debugDescription) does not parse back")
        _ = try? upstream.configured(bootstrap: [], pins: [], extraCAFile: nil)
    }
    if let plain = try? Upstream.parsePlain(text) {
        property(plain.isPlain && (try? Upstream.parsePlain(plain.description)) == plain,
                 "plain \(text.debugDescription) → \(plain.description.debugDescription) does not parse back")
    }
    if let encrypted = try? EncryptedUpstream.parse(text) {
        property((try? EncryptedUpstream.parse(encrypted.description)) == encrypted,
                 "\(text.debugDescription) → \(encrypted.description.debugDescription) does not parse back")
    }
    if let bootstrap = try? UpstreamBootstrap.parse(text) {
        property(!bootstrap.addresses.isEmpty && (try? UpstreamBootstrap.parse(bootstrap.description)) == bootstrap,
                 "bootstrap \(text.debugDescription) → \(bootstrap.description.debugDescription) does not parse back")
        let upstream = EncryptedUpstream(transport: .tls, name: bootstrap.name)
        let configured = try? upstream.configured(bootstrap: [bootstrap], pins: [], extraCAFile: nil)
        property(configured?.connectAddresses == bootstrap.addresses,
                 "bootstrap \(bootstrap) does not configure \(upstream)")
    }
    if let pin = try? UpstreamPin.parse(text) {
        property(!pin.pins.isEmpty && (try? UpstreamPin.parse(pin.description)) == pin,
                 "pin \(text.debugDescription) → \(pin.description.debugDescription) does not parse back")
    }
    return 0
}
