/// What changed on the host's network in one burst of kernel notifications (issue 30): addresses added or
/// removed, links gone up or down, default routes of the main table changed, and whether notifications
/// were lost (the kernel's `ENOBUFS` on the watching socket, so anything may have changed).
///
/// A burst is what arrived until the network was quiet for a moment (``NetworkChangeDebouncer``); one
/// value says what it held, so that a Wi-Fi hand-over's dozen messages cost one reaction. The type lives
/// in the core so that a module without sockets (`HostPinURL`) can be told about a change; the socket that
/// watches for it is `HostPinNet`'s `NetworkMonitor`.
public struct NetworkChange: Sendable, Hashable, CustomStringConvertible {
    /// One kernel notification that counts as a change.
    public enum Event: Sendable, Hashable, CaseIterable {
        /// An address appeared on an interface (not a lifetime-only update of one already there).
        case addressAdded
        /// An address left an interface.
        case addressRemoved
        /// A link went up (administratively up and running).
        case linkUp
        /// A link went down, or a link that was up went away.
        case linkDown
        /// A default route (destination length 0) of the main table appeared, went, or was replaced.
        case defaultRouteChanged
        /// The kernel dropped notifications (`ENOBUFS` on the socket): what changed is unknown.
        case eventsLost
    }

    public var addressesAdded = 0
    public var addressesRemoved = 0
    public var linksUp = 0
    public var linksDown = 0
    public var defaultRoutesChanged = 0
    /// How many times notifications were lost (`ENOBUFS`) within the burst.
    public var eventsLost = 0

    public init() {}

    /// Counts `event` in the burst.
    public mutating func add(_ event: Event) {
        switch event {
        case .addressAdded: addressesAdded += 1
        case .addressRemoved: addressesRemoved += 1
        case .linkUp: linksUp += 1
        case .linkDown: linksDown += 1
        case .defaultRouteChanged: defaultRoutesChanged += 1
        case .eventsLost: eventsLost += 1
        }
    }

    /// How many notifications the burst counted.
    public var events: Int {
        addressesAdded + addressesRemoved + linksUp + linksDown + defaultRoutesChanged + eventsLost
    }

    /// Whether nothing was counted.
    public var isEmpty: Bool { events == 0 }

    /// The counts in words, as the log line says them: `2 addresses added, 1 default route changed`.
    public var description: String {
        func counted(_ count: Int, _ one: String, _ many: String, _ what: String) -> String? {
            count == 0 ? nil : "\(count) \(count == 1 ? one : many) \(what)"
        }
        let parts = [counted(addressesAdded, "address", "addresses", "added"),
                     counted(addressesRemoved, "address", "addresses", "removed"),
                     counted(linksUp, "link", "links", "up"),
                     counted(linksDown, "link", "links", "down"),
                     counted(defaultRoutesChanged, "default route", "default routes", "changed"),
                     eventsLost == 0 ? nil : "notifications lost"].compactMap { $0 }
        return parts.isEmpty ? "no change" : parts.joined(separator: ", ")
    }
}
