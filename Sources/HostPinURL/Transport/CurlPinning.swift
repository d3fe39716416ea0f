import HostPin
import Synchronization

/// Where curl connects for a pinned transfer, while the URL keeps the name (for `Host`, TLS SNI and the
/// certificate check): a `CURLOPT_CONNECT_TO` entry and, for several addresses, the `CURLOPT_RESOLVE`
/// entry of a name that stands for exactly that address set.
///
/// One address: `::ADDRESS:PORT`, connected to without any lookup. Several: `::hostpin-N.invalid:PORT`
/// with `+hostpin-N.invalid:PORT:[::1],127.0.0.10`, so curl has the whole set under one name and races
/// the families itself (Happy Eyeballs: the first address's family at once, the other after
/// `CURLOPT_HAPPY_EYEBALLS_TIMEOUT_MS`). Why not `CURLOPT_RESOLVE` for the URL's own name: curl reuses a
/// kept-alive connection when its name and port match, so after the name's answer changed a request
/// would go to the old address (docs/ARCHITECTURE.md, "Known traps"). It reuses a connection only when
/// the connect-to host matches too, and each distinct address set has its own name, so a connection is
/// reused only for the same addresses. The `+` makes the entry expire from curl's DNS cache
/// (`CURLOPT_DNS_CACHE_TIMEOUT`, 60 s) instead of staying for the process's life; every transfer loads
/// its own entry again before it connects. `.invalid` (RFC 6761 §6.4) makes sure that were the entry
/// ever missing, the system's resolver could only answer NXDOMAIN, never an address.
struct CurlPinning: Sendable, Hashable {
    /// The `CURLOPT_CONNECT_TO` entry.
    let connectTo: String
    /// The `CURLOPT_RESOLVE` entry for the stand-in name; `nil` for one address.
    let resolve: String?

    /// The pinning for `addresses` (in the order to attempt them) on `port`; `nil` when there is none.
    init?(_ addresses: [IPAddress], port: Int) {
        guard let first = addresses.first else { return nil }
        guard addresses.count > 1 else {
            connectTo = "::\(first.uriHost):\(port)"
            resolve = nil
            return
        }
        let name = AddressSetNames.name(for: addresses)
        connectTo = "::\(name):\(port)"
        resolve = "+\(name):\(port):" + addresses.map(\.uriHost).joined(separator: ",")
    }
}

/// One stand-in name per ordered address set, the same for the same set while the process runs.
enum AddressSetNames {
    /// Names given so far. Bounded: past ``limit`` sets the table starts again, and a set seen before
    /// gets a new name (its kept-alive connections are then not reused, never misused).
    private static let table = Mutex((next: 1, names: [[IPAddress]: String]()))
    static let limit = 4096

    static func name(for addresses: [IPAddress]) -> String {
        table.withLock { table in
            if let name = table.names[addresses] { return name }
            if table.names.count >= limit { table.names.removeAll() }
            let name = "hostpin-\(table.next).invalid"
            table.next += 1
            table.names[addresses] = name
            return name
        }
    }
}
