import HostPin

/// Decides which rtnetlink messages are a ``NetworkChange/Event``: the pure part of ``NetworkMonitor``,
/// tested on constructed bytes without a network.
///
/// - An address counts when it appears (`RTM_NEWADDR` for an interface, family, prefix and address not
///   known yet) or goes (`RTM_DELADDR` for one known, or unknown: it was there before the classifier
///   looked). IPv6 addresses get a `RTM_NEWADDR` each time a router advertisement renews their lifetimes:
///   the same key again is a lifetime-only update, and not a change.
/// - A link counts when its state flips between up (`IFF_UP` and `IFF_RUNNING`) and down, or a link that
///   was up goes away (`RTM_DELLINK`); the other `RTM_NEWLINK`s (statistics, MTU, a link created down)
///   do not.
/// - A route counts when it is a default route (destination length 0) of the main table (254), unicast,
///   and it appears with a gateway, interface and metric not known yet, or goes.
///
/// What is there already is learnt from dumps the monitor asks for at start (`RTM_GETLINK`, then
/// `RTM_GETADDR`, then `RTM_GETROUTE`): their replies (``NetlinkMessage/port`` this socket's) fill the
/// tables without counting. What is known is bounded (``limit`` entries a table): past it, new keys are
/// not remembered, so their later lifetime updates count again — at worst one more debounced change.
package struct NetlinkClassifier: Sendable {
    /// An address on an interface: index, family, prefix length, the address's bytes.
    struct AddressKey: Hashable, Sendable {
        var index: UInt32
        var family: UInt8
        var prefix: UInt8
        var address: [UInt8]
    }

    /// A default route: family, table, output interface, gateway, metric.
    struct RouteKey: Hashable, Sendable {
        var family: UInt8
        var table: UInt32
        var interface: [UInt8]
        var gateway: [UInt8]
        var metric: [UInt8]
    }

    /// What one message meant.
    package enum Reading: Sendable, Hashable {
        /// A change.
        case event(NetworkChange.Event)
        /// Nothing that counts (a dump's reply, a lifetime update, another table's route, …).
        case nothing
        /// The dump with this sequence number is complete (`NLMSG_DONE`, or its `NLMSG_ERROR`).
        case dumpDone(UInt32)
    }

    /// The most entries remembered in each table.
    package let limit: Int
    /// This socket's port (`nl_pid`): dump replies carry it.
    package var port: UInt32
    private(set) var addresses: Set<AddressKey> = []
    private(set) var linksUp: [UInt32: Bool] = [:]
    private(set) var routes: Set<RouteKey> = []

    package static let mainTable: UInt32 = 254
    static let up: UInt32 = 0x1        // IFF_UP
    static let running: UInt32 = 0x40  // IFF_RUNNING
    static let unicast: UInt8 = 1      // RTN_UNICAST
    static let addressAttribute: UInt16 = 1  // IFA_ADDRESS
    static let localAttribute: UInt16 = 2    // IFA_LOCAL
    static let interfaceAttribute: UInt16 = 4  // RTA_OIF
    static let gatewayAttribute: UInt16 = 5    // RTA_GATEWAY
    static let metricAttribute: UInt16 = 6     // RTA_PRIORITY
    static let tableAttribute: UInt16 = 15     // RTA_TABLE

    package init(port: UInt32 = 0, limit: Int = 4096) {
        self.port = port
        self.limit = max(1, limit)
    }

    /// Forgets what is known (after `ENOBUFS`: notifications were lost, so the tables may be wrong; the
    /// monitor dumps again).
    package mutating func reset() {
        addresses = []
        linksUp = [:]
        routes = []
    }

    /// Reads `message`; updates what is known.
    package mutating func read(_ message: NetlinkMessage) -> Reading {
        let fromDump = port != 0 && message.port == port && message.sequence != 0
        switch message.type {
        case NetlinkMessage.done, NetlinkMessage.error:
            return fromDump ? .dumpDone(message.sequence) : .nothing
        case NetlinkMessage.newLink, NetlinkMessage.deleteLink:
            return link(message, seeding: fromDump)
        case NetlinkMessage.newAddress, NetlinkMessage.deleteAddress:
            return address(message, seeding: fromDump)
        case NetlinkMessage.newRoute, NetlinkMessage.deleteRoute:
            return route(message, seeding: fromDump)
        default:
            return .nothing
        }
    }

    private mutating func link(_ message: NetlinkMessage, seeding: Bool) -> Reading {
        // ifinfomsg: family, pad, type (2), index (4), flags (4), change (4).
        guard message.payload.count >= 16 else { return .nothing }
        let index = message.payload.uint32(at: 4)
        let flags = message.payload.uint32(at: 8)
        let isUp = message.type == NetlinkMessage.newLink && flags & Self.up != 0 && flags & Self.running != 0
        let wasUp = linksUp[index]
        if message.type == NetlinkMessage.deleteLink {
            linksUp[index] = nil
            return !seeding && wasUp == true ? .event(.linkDown) : .nothing
        }
        if wasUp != nil || linksUp.count < limit { linksUp[index] = isUp }
        if seeding { return .nothing }
        switch (wasUp, isUp) {
        case (true, false): return .event(.linkDown)
        case (false, true), (nil, true): return .event(.linkUp)
        default: return .nothing
        }
    }

    private mutating func address(_ message: NetlinkMessage, seeding: Bool) -> Reading {
        // ifaddrmsg: family, prefix length, flags, scope, index (4); then attributes.
        guard message.payload.count >= 8 else { return .nothing }
        let attributes = message.attributes(from: 8)
        // IFA_LOCAL is the interface's own address on a point-to-point link; IFA_ADDRESS otherwise.
        guard let bytes = attributes[Self.localAttribute] ?? attributes[Self.addressAttribute] else { return .nothing }
        let key = AddressKey(index: message.payload.uint32(at: 4), family: message.payload[0],
                             prefix: message.payload[1], address: bytes)
        if message.type == NetlinkMessage.deleteAddress {
            addresses.remove(key)
            return seeding ? .nothing : .event(.addressRemoved)
        }
        let known = addresses.contains(key)
        if !known, addresses.count < limit { addresses.insert(key) }
        return seeding || known ? .nothing : .event(.addressAdded)
    }

    private mutating func route(_ message: NetlinkMessage, seeding: Bool) -> Reading {
        // rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags (4); then attributes.
        guard message.payload.count >= 12, message.payload[1] == 0, message.payload[7] == Self.unicast else {
            return .nothing
        }
        let attributes = message.attributes(from: 12)
        // RTA_TABLE holds tables above 255; rtm_table says 252 (RT_TABLE_COMPAT) for them.
        let table = attributes[Self.tableAttribute].flatMap { $0.count == 4 ? $0.uint32(at: 0) : nil }
            ?? UInt32(message.payload[4])
        guard table == Self.mainTable else { return .nothing }
        let key = RouteKey(family: message.payload[0], table: table, interface: attributes[Self.interfaceAttribute] ?? [],
                           gateway: attributes[Self.gatewayAttribute] ?? [], metric: attributes[Self.metricAttribute] ?? [])
        if message.type == NetlinkMessage.deleteRoute {
            routes.remove(key)
            return seeding ? .nothing : .event(.defaultRouteChanged)
        }
        let known = routes.contains(key)
        if !known, routes.count < limit { routes.insert(key) }
        return seeding || known ? .nothing : .event(.defaultRouteChanged)
    }
}
