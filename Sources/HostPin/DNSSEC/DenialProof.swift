/// The NSEC and NSEC3 proofs of a negative answer (RFC 4035 §5.4, RFC 5155 §8, RFC 6840 §4.1; Unbound's
/// `val_nsec`, `val_nsec3`), over records whose signatures ``AnswerValidation`` has already verified.
package enum DenialProof {
    /// NODATA: an NSEC at `name` whose bitmap lists neither `type` nor CNAME. An NSEC listing NS without SOA
    /// is the parent's side of a delegation and proves nothing about the child's types (only about DS);
    /// one listing SOA is the child's apex and proves nothing about the DS, which only the parent holds
    /// (RFC 6840 §4.1, both sides).
    package static func provesNODATA(name: WireName, type: UInt16, nsecs: [DNSSECRecord]) -> Bool {
        nsecs.contains { nsec in
            guard nsec.owner == name, !NSECRecord.lists(nsec, type: type),
                  !NSECRecord.lists(nsec, type: DNSSECRecord.Kind.cname)
            else { return false }
            return provesOnItsSide(type: type, lists: { NSECRecord.lists(nsec, type: $0) })
        }
    }

    /// Whether a record at a name whose bitmap lacks `type` proves it absent there, by the side of a zone cut
    /// the bitmap shows: parent side (NS without SOA) only for DS, child apex (SOA) for anything but DS.
    private static func provesOnItsSide(type: UInt16, lists: (UInt16) -> Bool) -> Bool {
        if lists(DNSSECRecord.Kind.soa) { return type != DNSSECRecord.Kind.ds }
        return !lists(DNSSECRecord.Kind.ns) || type == DNSSECRecord.Kind.ds
    }

    /// NXDOMAIN: an NSEC covering `name`, and one covering the wildcard at its closest encloser (the
    /// longest ancestor of `name` the covering NSEC's owner or next name shares). A covering NSEC whose
    /// owner is an ancestor of `name` and lists NS without SOA is a delegation's: it proves nothing below
    /// the cut (RFC 6840 §4.1).
    package static func provesNXDOMAIN(name: WireName, nsecs: [DNSSECRecord]) -> Bool {
        for cover in nsecs where NSECRecord.covers(cover, name) {
            if cover.owner.isAncestorOrSelf(of: name), NSECRecord.lists(cover, type: DNSSECRecord.Kind.ns),
               !NSECRecord.lists(cover, type: DNSSECRecord.Kind.soa) { continue }
            guard let next = WireName.read(cover.rdata)?.name else { continue }
            let encloser = max(sharedLabels(name, cover.owner), sharedLabels(name, next))
            guard encloser < name.labelCount else { continue }
            let wildcard = WireName(labels: [[UInt8(ascii: "*")]] + name.suffix(labels: encloser).labels)
            if nsecs.contains(where: { NSECRecord.covers($0, wildcard) }) { return true }
        }
        return false
    }

    /// NODATA under NSEC3 (RFC 5155 §8.5): an NSEC3 matching `name`, hashed with its own parameters,
    /// whose bitmap lists neither `type` nor CNAME, read by the side of a cut as an NSEC is (RFC 6840 §4.1).
    /// Records with another hash algorithm or too many iterations are never hashed (see ``NSEC3Record``).
    package static func provesNODATA(name: WireName, type: UInt16, nsec3s: [NSEC3Record]) -> Bool {
        nsec3s.contains { nsec3 in
            nsec3.matches(name) && !nsec3.lists(type) && !nsec3.lists(DNSSECRecord.Kind.cname)
                && provesOnItsSide(type: type, lists: nsec3.lists)
        }
    }

    /// NXDOMAIN under NSEC3 (RFC 5155 §8.4): the closest encloser proof — an NSEC3 matching an ancestor
    /// of `name` that is no delegation (NS without SOA), one covering the next closer name — and one
    /// covering the wildcard at that encloser. Opt-out is not read yet.
    package static func provesNXDOMAIN(name: WireName, nsec3s: [NSEC3Record]) -> Bool {
        guard name.labelCount > 0 else { return false }
        for encloserLabels in stride(from: name.labelCount - 1, through: 0, by: -1) {
            let encloser = name.suffix(labels: encloserLabels)
            guard let match = nsec3s.first(where: { $0.matches(encloser) }) else { continue }
            if match.lists(DNSSECRecord.Kind.ns), !match.lists(DNSSECRecord.Kind.soa) { return false }
            let nextCloser = name.suffix(labels: encloserLabels + 1)
            let wildcard = WireName(labels: [[UInt8(ascii: "*")]] + encloser.labels)
            return nsec3s.contains { $0.covers(nextCloser) } && nsec3s.contains { $0.covers(wildcard) }
        }
        return false
    }

    /// The number of trailing labels two names share.
    private static func sharedLabels(_ one: WireName, _ other: WireName) -> Int {
        zip(one.labels.reversed(), other.labels.reversed()).prefix { $0 == $1 }.count
    }
}
