import CCurl

extension EncryptedTransportFailure {
    /// The failure for a libcurl result on `handle`, with curl's message (the handle's error buffer when
    /// it has one, which is more precise than `curl_easy_strerror`).
    ///
    /// libcurl reports an untrusted chain and a certificate for another name with the same code,
    /// `CURLE_PEER_FAILED_VERIFICATION`; the X.509 verification result (`CURLINFO_SSL_VERIFYRESULT`)
    /// tells them apart. A chain OpenSSL refuses stops the handshake, and curl records OpenSSL's code
    /// (an `X509_V_ERR_…` of 2 or more: 20 for an unknown issuer, 10 for an expired certificate). The
    /// name is checked by curl after a handshake that passed, before it records the chain's result, so
    /// a name mismatch leaves 0 (`X509_V_OK`) or curl's placeholder 1 (`!X509_V_OK`; measured with
    /// curl 7.88 and OpenSSL 3.0).
    init(curl code: CURLcode, handle: UnsafeMutableRawPointer, message: String) {
        let text = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
        switch code {
        case CURLE_OPERATION_TIMEDOUT: self = .timeout
        case CURLE_COULDNT_CONNECT: self = .connectFailed(text)
        case CURLE_PEER_FAILED_VERIFICATION:
            var verifyResult = 0
            hostpin_curl_getinfo_long(handle, CURLINFO_SSL_VERIFYRESULT, &verifyResult)
            self = verifyResult <= 1 ? .certificateNameMismatch(text) : .untrustedCertificate(text)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: self = .pinMismatch
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_USE_SSL_FAILED:
            self = .tlsFailed(text)
        case CURLE_PARTIAL_FILE: self = .replyCutShort
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR: self = .connectionClosed
        default: self = .transferFailed(code: Int(code.rawValue), message: text)
        }
    }
}
