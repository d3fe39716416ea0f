import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import Synchronization

/// Sends pinned plain-HTTP requests through one inner `URLSession` that stores no cookies, caches
/// nothing and follows no redirects (the application's session and the interceptor own those), with
/// every task's events routed to its sink.
final class InnerSessionTransport: Transport {
    /// The process-wide inner session: one connection pool shared by every interceptor instance.
    static let shared = InnerSessionTransport()

    private let router = Router()
    private let session: URLSession
    /// Enqueues client calls (see ``Transport/waitsForClient``).
    let waitsForClient = false
    /// Where tasks are created, resumed and cancelled: those calls block on FoundationNetworking's work
    /// queue. A serial queue of our own gets its own thread; `DispatchQueue.global()` would block one of
    /// the few threads Swift's cooperative pool runs on.
    private let control = DispatchQueue(label: "hostpin.inner-session.control")

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        let queue = OperationQueue()
        queue.name = "hostpin.inner-session"
        // One at a time: each transfer's events must reach its sink in order.
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    /// Creates and resumes the inner task for `request` addressed to the first address on ``control``: never on
    /// FoundationNetworking's work queue (`resume()` syncs onto it: the deadlock trap in docs/ARCHITECTURE.md), and
    /// not on Swift's cooperative pool either, whose few threads would wait while that one queue is busy
    /// with every transfer in the process.
    ///
    /// Only the first of `addresses` is used (``InterceptionStateMachine`` gives one IPv4 address per transfer, and
    /// moves to the next when it cannot connect): URLSession reports no connection before the response,
    /// so it cannot race addresses without sending the request twice.
    func start(_ request: PinnedRequest, to addresses: [IPAddress], attemptDelay _: Duration, reportsConnections: Bool,
               feed _: RankingFeed?, sink: any TransferSink) -> any TransferHandle {
        guard let address = addresses.first, let addressed = request.addressed(to: address) else {
            sink.finished(with: .transfer(URLError(.badURL, url: request.url, description: "the URL cannot be pinned")))
            return InnerTask(router: router, control: control)
        }
        // URLSession says nothing of its connections: the one address given is the attempt (or a kept
        // connection to it is reused) and where the response comes from.
        if reportsConnections { sink.attempting(address) }
        let handle = InnerTask(router: router, control: control)
        let (session, router) = (session, router)
        let route = Router.Route(sink: sink, address: reportsConnections ? address : nil)
        control.async {
            let task = session.dataTask(with: addressed)
            router.add(route, for: task.taskIdentifier)
            if handle.attach(task) { task.resume() } else { router.remove(task.taskIdentifier) }
        }
        return handle
    }

    /// The inner task once created; cancelling before that prevents it from starting.
    private final class InnerTask: TransferHandle {
        private struct State {
            var task: URLSessionDataTask?
            var cancelled = false
        }

        private let router: Router
        private let control: DispatchQueue
        private let state = Mutex(State())

        init(router: Router, control: DispatchQueue) {
            self.router = router
            self.control = control
        }

        /// Records `task`; false when the transfer was cancelled before it existed.
        func attach(_ task: URLSessionDataTask) -> Bool {
            state.withLock { state in
                guard !state.cancelled else { return false }
                state.task = task
                return true
            }
        }

        /// Called from `stopLoading`, on FoundationNetworking's work queue, where 6.3's
        /// `URLSessionTask.cancel()` would `sync` onto that same queue and trap: cancel from elsewhere.
        func cancel() {
            guard let task = state.withLock({ state -> URLSessionDataTask? in
                state.cancelled = true
                return state.task
            }) else { return }
            let router = router
            control.async {
                router.remove(task.taskIdentifier)
                task.cancel()
            }
        }
    }

    /// The inner session's delegate: hands each task's events to its sink.
    private final class Router: NSObject, URLSessionDataDelegate, Sendable {
        /// Where one task's events go.
        struct Route: Sendable {
            let sink: any TransferSink
            /// The address the task was sent to, when its sink wants to know.
            let address: IPAddress?
        }

        private let routes = Mutex<[Int: Route]>([:])

        func add(_ route: Route, for task: Int) {
            routes.withLock { $0[task] = route }
        }

        func remove(_ task: Int) {
            _ = routes.withLock { $0.removeValue(forKey: task) }
        }

        private func route(for task: URLSessionTask) -> Route? {
            routes.withLock { $0[task.taskIdentifier] }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            if let response = response as? HTTPURLResponse, let route = route(for: dataTask) {
                route.sink.received(response, from: route.address)
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            route(for: dataTask)?.sink.received(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let sink = routes.withLock { $0.removeValue(forKey: task.taskIdentifier) }?.sink
            guard let error else {
                sink?.finished(with: nil)
                return
            }
            let urlError = error as? URLError ?? URLError(.unknown)
            sink?.finished(with: urlError.code == .cannotConnectToHost ? .connect(urlError) : .transfer(urlError))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest,
                        completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            // Never follow with the pinned IP as host: the 3xx goes back to the application as it is.
            completionHandler(nil)
        }
    }
}
