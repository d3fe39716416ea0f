import HostPin
import HostPinNet

/// The checks across keys, made once each key is valid on its own: bootstrap and pin names against the
/// upstreams' names, encrypted upstreams that nothing can find, listening addresses against
/// `listeners.allowRemote`, the TTL clamps' order.
package enum ConfigChecks {
    package static func run(on values: [String: ConfigValue], _ reader: inout ConfigReader) {
        func texts(_ path: String) -> [String] {
            if case .values(let texts)? = values[path] { texts } else { [] }
        }
        if case .values(let servers)? = values["upstreams.servers"] {
            let upstreams = servers.compactMap { try? Upstream.parse($0) }
            var names: [String] = []
            for name in upstreams.compactMap(\.encrypted).map(\.name.text) where !names.contains(name) { names.append(name) }
            let bootstrapped = texts("upstreams.bootstrap").compactMap { try? UpstreamBootstrap.parse($0) }
            for (key, entries) in [("upstreams.bootstrap", bootstrapped.map(\.name)),
                                   ("upstreams.pins", texts("upstreams.pins").compactMap { try? UpstreamPin.parse($0) }.map(\.name))] {
                for name in entries where !names.contains(name.text) {
                    reader.report("\(key).\(name.text)", .unusedName(name.text, upstreamNames: names))
                }
            }
            if !upstreams.contains(where: \.isPlain) {
                for (index, upstream) in upstreams.enumerated() {
                    guard let encrypted = upstream.encrypted, encrypted.name.literalAddress == nil,
                          !bootstrapped.contains(where: { $0.name == encrypted.name }) else { continue }
                    reader.report("upstreams.servers[\(index)]", .unbootstrapped(upstream: servers[index], name: encrypted.name.text))
                }
            }
        }
        if case .flag(true)? = values["listeners.allowRemote"] {} else {
            for path in ["listeners.dns", "listeners.proxy", "listeners.metrics"] {
                let addresses = texts(path)
                for (index, text) in addresses.enumerated() {
                    guard let address = SocketAddress(text), address.address.specialPurposeBlock?.name != "loopback" else { continue }
                    reader.report(path == "listeners.dns" ? "\(path)[\(index)]" : path, .notLoopback(text))
                }
            }
        }
        let watching: Bool = switch values["watch.local"] {
        case .values?, .flag(true)?: true
        default: false
        }
        if !watching {
            for path in ["watch.interval", "watch.nameInterval", "watch.hijackList", "watch.ordinary", "watch.noProbe"]
            where values[path] != nil {
                reader.report(path, .needs("watch.local"))
            }
        }
        let minimum = texts("cache.minTTL").first.flatMap { UInt32($0) } ?? ResolutionCache.Limits().minimumTTL
        let maximum = texts("cache.maxTTL").first.flatMap { UInt32($0) } ?? ResolutionCache.Limits().maximumTTL
        if minimum > maximum {
            reader.report("cache.minTTL", .minimumAboveMaximum(minimum: minimum, maximum: maximum))
        }
    }
}
