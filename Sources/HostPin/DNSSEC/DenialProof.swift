/// The NSEC and NSEC3 proofs of a negative answer (RFC 4035 §5.4, RFC 5155 §8, RFC 6840 §4.1; Unbound's
/// `val_nsec`, `val_nsec3`), over records whose signatures ``AnswerValidation`` has already verified.
package enum DenialProof {
    /// NODATA: an NSEC at `name` whose bitmap lists neither `type` nor CNAME. An NSEC listing NS without SOA
    /// is the parent's side of a delegation and proves nothing about the child's types (only about DS);
    /// one listing SOA is the child's apex and proves nothing about the DS, which only the parent holds
    /// (RFC 6840 §4.1, both sides).
    /// Or wildcard NODATA (RFC 4035 §3.1.3.4, §5.4): an NSEC covering `name`, and one at the wildcard of the
    /// closest encloser that covering NSEC shows, listing neither `type` nor CNAME (Unbound requires the
    /// same: the wildcard's encloser equal to the one the cover proves).
    package static func provesNODATA(name: WireName, type: UInt16, nsecs: [DNSSECRecord]) -> Bool {
        let match = nsecs.contains { nsec in
            guard nsec.owner == name, !NSECRecord.lists(nsec, type: type),
                  !NSECRecord.lists(nsec, type: DNSSECRecord.Kind.cname)
            else { return false }
            return provesOnItsSide(type: type, lists: { NSECRecord.lists(nsec, type: $0) })
        }
        return match || nsecs.contains { cover in
            guard let wildcard = wildcard(at: closestEncloser(of: name, coveredBy: cover)) else { return false }
            return nsecs.contains {
                $0.owner == wildcard && !NSECRecord.lists($0, type: type) && !NSECRecord.lists($0, type: DNSSECRecord.Kind.cname)
            }
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
        nsecs.contains { cover in
            guard let wildcard = wildcard(at: closestEncloser(of: name, coveredBy: cover)) else { return false }
            return nsecs.contains { NSECRecord.covers($0, wildcard) }
        }
    }

    /// The closest encloser of `name` an NSEC covering it shows: the longest ancestor the NSEC's owner or
    /// next name shares with `name`; `nil` when `cover` does not cover `name`, or is a delegation's NSEC
    /// (NS without SOA) at an ancestor, which proves nothing below the cut (RFC 6840 §4.1).
    private static func closestEncloser(of name: WireName, coveredBy cover: DNSSECRecord) -> WireName? {
        guard NSECRecord.covers(cover, name), let next = WireName.read(cover.rdata)?.name else { return nil }
        if cover.owner.isAncestorOrSelf(of: name), NSECRecord.lists(cover, type: DNSSECRecord.Kind.ns),
           !NSECRecord.lists(cover, type: DNSSECRecord.Kind.soa) { return nil }
        let encloser = max(sharedLabels(name, cover.owner), sharedLabels(name, next))
        guard encloser < name.labelCount else { return nil }
        return name.suffix(labels: encloser)
    }

    /// `*.` + `encloser` (RFC 4592 §2.1.1).
    private static func wildcard(at encloser: WireName?) -> WireName? {
        encloser.map { WireName(labels: [[UInt8(ascii: "*")]] + $0.labels) }
    }

    /// What an NSEC3 denial proves when it stands.
    package enum NSEC3Denial: Sendable, Hashable {
        /// The name or type is proven absent.
        case proven
        /// Proven only up to an opt-out span: the NSEC3 covering the next closer name has the opt-out
        /// flag, so an unsigned delegation may exist there (RFC 5155 §6, §9.2): insecure.
        case optOut
    }

    /// NODATA under NSEC3 (RFC 5155 §8.5–§8.7), each record hashed with its own parameters; records with
    /// another hash algorithm or too many iterations are never hashed (see ``NSEC3Record``):
    /// - an NSEC3 matching `name` whose bitmap lists neither `type` nor CNAME; one listing NS without SOA
    ///   is the parent's side of a delegation and proves only the DS absent (RFC 6840 §4.1), and for DS
    ///   one listing SOA is the child's apex and proves nothing;
    /// - otherwise wildcard NODATA (§8.7): the closest encloser proof for `name` and an NSEC3 matching the
    ///   wildcard at the encloser, listing neither `type` nor CNAME (``NSEC3Denial/optOut`` when the next
    ///   closer cover has the opt-out flag, as Unbound reads §9.2);
    /// - otherwise, for DS only (§8.6, RFC 6840 §4.4): the closest encloser proof whose next closer
    ///   cover has the opt-out flag: ``NSEC3Denial/optOut``.
    package static func provesNODATA(name: WireName, type: UInt16, nsec3s: [NSEC3Record]) -> NSEC3Denial? {
        let ds = DNSSECRecord.Kind.ds
        if let match = nsec3s.first(where: { $0.matches(name) }) {
            guard !match.lists(type), !match.lists(DNSSECRecord.Kind.cname) else { return nil }
            let soa = match.lists(DNSSECRecord.Kind.soa)
            let parentSide = match.lists(DNSSECRecord.Kind.ns) && !soa
            return type == ds ? (soa ? nil : .proven) : (parentSide ? nil : .proven)
        }
        guard let proof = closestEncloserProof(of: name, nsec3s: nsec3s) else { return nil }
        let wildcard = WireName(labels: [[UInt8(ascii: "*")]] + proof.encloser.labels)
        if let star = nsec3s.first(where: { $0.matches(wildcard) }) {
            guard !star.lists(type), !star.lists(DNSSECRecord.Kind.cname) else { return nil }
            return proof.nextCloserCover.optOut ? .optOut : .proven
        }
        return type == ds && proof.nextCloserCover.optOut ? .optOut : nil
    }

    /// NXDOMAIN under NSEC3 (RFC 5155 §8.4): the closest encloser proof and an NSEC3 covering the
    /// wildcard at that encloser. When the next closer name's cover has the opt-out flag, an unsigned
    /// delegation may hide there: ``NSEC3Denial/optOut`` (§9.2; Unbound reads it so, delv calls it secure).
    package static func provesNXDOMAIN(name: WireName, nsec3s: [NSEC3Record]) -> NSEC3Denial? {
        guard let proof = closestEncloserProof(of: name, nsec3s: nsec3s) else { return nil }
        let wildcard = WireName(labels: [[UInt8(ascii: "*")]] + proof.encloser.labels)
        guard nsec3s.contains(where: { $0.covers(wildcard) }) else { return nil }
        return proof.nextCloserCover.optOut ? .optOut : .proven
    }

    /// The closest encloser proof (RFC 5155 §8.3): the longest ancestor of `name` an NSEC3 matches — not
    /// a delegation's (NS without SOA: nothing below a cut is proven by the parent), nor a DNAME's — and the NSEC3
    /// covering the next closer name (the encloser plus one label of `name`). `nil` when either is missing.
    package static func closestEncloserProof(of name: WireName, nsec3s: [NSEC3Record])
        -> (encloser: WireName, encloserMatch: NSEC3Record, nextCloserCover: NSEC3Record)? {
        guard name.labelCount > 0 else { return nil }
        for encloserLabels in stride(from: name.labelCount - 1, through: 0, by: -1) {
            let encloser = name.suffix(labels: encloserLabels)
            guard let match = nsec3s.first(where: { $0.matches(encloser) }) else { continue }
            if match.lists(DNSSECRecord.Kind.ns), !match.lists(DNSSECRecord.Kind.soa) { return nil }
            // Names below a DNAME are redirected, never denied (RFC 6672 §3.2, RFC 5155 §8.3).
            if match.lists(DNSSECRecord.Kind.dname) { return nil }
            let nextCloser = name.suffix(labels: encloserLabels + 1)
            guard let cover = nsec3s.first(where: { $0.covers(nextCloser) }) else { return nil }
            return (encloser, match, cover)
        }
        return nil
    }

    /// The number of trailing labels two names share.
    private static func sharedLabels(_ one: WireName, _ other: WireName) -> Int {
        zip(one.labels.reversed(), other.labels.reversed()).prefix { $0 == $1 }.count
    }
}
