import HostPin

extension DNSResponder {
    /// Drops the forwarded replies kept for `name` (MX, TXT, SRV, … of that name), or every one when
    /// `name` is `nil`: a flush (`hostpin ctl flush`), or a reload that changed the upstreams, whose
    /// replies the forward cache does not tell apart. The A and AAAA answers are the
    /// ``resolver``'s cache's to flush.
    public func removeForwardedReplies(for name: HostName? = nil) {
        forwardCache.remove(name: name?.text)
    }
}
