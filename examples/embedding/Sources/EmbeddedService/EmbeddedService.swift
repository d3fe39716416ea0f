import Foundation
import HostPin
import HostPinNet
import HostPinService

/// Runs HostPin's service inside a program of its own: the DNS stub and the forward proxy on one cache,
/// from a configuration built in code (no command line, no configuration file), then a reload with a
/// changed rule, then a stop. Nothing here installs a signal handler: that is the program's choice.
///
/// Usage: `EmbeddedService IP:PORT [NAME]` — IP:PORT is the trusted upstream (plain DNS); NAME (by default
/// `www.example.test`, the lab's) is resolved, then blocked by the reload.
@main
struct EmbeddedService {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let text = arguments.first, let upstream = Upstream(text) else {
            FileHandle.standardError.write(Data("usage: EmbeddedService IP:PORT [NAME]\n".utf8))
            exit(2)
        }
        do {
            let name = try HostName.parse(arguments.count > 1 ? arguments[1] : "www.example.test")
            // The configuration as a value: the stub and the proxy on free loopback ports.
            var configuration = ServiceConfiguration(upstreams: [upstream])
            configuration.dns = ServiceConfiguration.DNS(listenAddresses: [SocketAddress("127.0.0.1:0")!])
            configuration.proxyOptions = ProxyOptions(listenAddress: SocketAddress("127.0.0.1:0")!)

            let service = try await Service.start(configuration)
            let listeners = await service.listeners
            print("stub: \(listeners.dns.map(\.description).joined(separator: ", ")); proxy: \(listeners.proxy.map(\.description) ?? "-")")

            // The program resolves through the same cache the stub and the proxy answer from.
            let resolution = try await service.resolver.resolve(name)
            print("\(name): \(resolution.addresses.map(\.description).joined(separator: ", "))")

            // A reload with a changed rule: all or nothing, the cache kept.
            configuration.rules = try Rules(json: Data(#"{"rules": [{"action": "block", "host": "\#(name)"}]}"#.utf8),
                                            relativeTo: URL(fileURLWithPath: "/"))
            let reload = try await service.reload(to: configuration)
            print("reloaded: \(reload.changes.joined(separator: "; "))")
            let statistics = await service.statistics
            print("cache: \(statistics.cache.entries) entries, \(statistics.cache.misses) misses; reloads: \(statistics.reloads)")

            await service.stop(grace: .seconds(1))
            print("stopped")
        } catch {
            FileHandle.standardError.write(Data("EmbeddedService: \(error)\n".utf8))
            exit(1)
        }
    }
}
