import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransferFailure {
    /// The failure for a libcurl result, with curl's own message.
    ///
    /// `CURLE_COULDNT_CONNECT` is a connect failure (the next address may work); certificate problems map
    /// to `.serverCertificateUntrusted`, other TLS failures to `.secureConnectionFailed`, timeouts to
    /// `.timedOut`.
    init(curl code: CURLcode, message: String, url: URL?) {
        let urlCode: URLError.Code
        switch code {
        case CURLE_COULDNT_CONNECT: urlCode = .cannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT: urlCode = .timedOut
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE: urlCode = .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_USE_SSL_FAILED:
            urlCode = .secureConnectionFailed
        case CURLE_COULDNT_RESOLVE_HOST: urlCode = .cannotFindHost
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE: urlCode = .networkConnectionLost
        case CURLE_GOT_NOTHING, CURLE_WEIRD_SERVER_REPLY: urlCode = .badServerResponse
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: urlCode = .badURL
        case CURLE_ABORTED_BY_CALLBACK: urlCode = .cancelled
        default: urlCode = .unknown
        }
        let error = URLError(urlCode, url: url, description: message)
        self = code == CURLE_COULDNT_CONNECT ? .connect(error) : .transfer(error)
    }
}
