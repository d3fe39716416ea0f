import HostPin

/// How the stub's messages map onto ``HostPin/DNSQueryMetrics``' label values.
extension DNSQueryMetrics.Transport {
    init(_ transport: DNSTransport) {
        switch transport {
        case .udp: self = .udp
        case .tcp: self = .tcp
        }
    }
}

extension DNSQueryMetrics.QueryType {
    /// The label of a question's type; a message without a question that reads is `other`.
    init(_ question: DNSQuestion?) {
        switch question?.type {
        case .a?: self = .a
        case .aaaa?: self = .aaaa
        default: self = .other
        }
    }
}

extension DNSQueryMetrics.Outcome {
    /// What `answer` says: its RCODE, and for NOERROR whether it holds a record other than a CNAME (an
    /// address, the HINFO of ANY) or is NODATA.
    init(_ answer: DNSAnswer) {
        switch answer.rcode {
        case .noerror:
            let answered = answer.records.contains { if case .canonicalName = $0.data { false } else { true } }
            self = answered ? .answered : .nodata
        case .formerr: self = .formerr
        case .servfail: self = .servfail
        case .nxdomain: self = .nxdomain
        case .notimp: self = .notimp
        case .refused: self = .refused
        case .notauth: self = .notauth
        case .badvers: self = .badvers
        }
    }

    /// What a forwarder's reply says, read from its header (RFC 1035 §4.1.1: RCODE, ANCOUNT): the
    /// forwarder passes on only whole NOERROR and NXDOMAIN responses; NOERROR with an empty answer
    /// section is NODATA.
    init(forwarded reply: [UInt8]) {
        guard reply.count >= 12 else {
            self = .servfail
            return
        }
        switch reply[3] & 0x0F {
        case 0: self = reply[6] == 0 && reply[7] == 0 ? .nodata : .answered
        case 3: self = .nxdomain
        default: self = .servfail
        }
    }
}
