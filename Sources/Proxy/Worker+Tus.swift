import EventLoop
import HTTPCore
import MultipartEncoding
import ProxyCore
import Resumable

#if canImport(Glibc)
    import Glibc
#endif

extension Worker {
    /// `settings` with this worker's handlers on the routes answered locally: each `tus:` route
    /// gets a `TusHandler` on its store (a store that cannot be opened answers 503).
    func withLocalRoutes(_ settings: ProxySettings) -> ProxySettings {
        guard settings.routes.contains(where: { $0.tus != nil }), let notifier = progressNotifier else {
            return settings
        }
        let routes = settings.routes.map { route -> Route in
            guard let tus = route.tus else { return route }
            var local = route
            do throws(StoreError) {
                let service = try tusServices.service(tus, redis: config.redis)
                local.local = TusHandler(
                    service: service, route: route, settings: tus,
                    maxFileBytes: settings.limits.multipart.fileBytes,
                    worker: self, notifier: notifier,
                    deliverySettings: Self.deliverySettings(route, tus, settings, tickets: deliveryTickets))
            } catch {
                ErrorLog.shared.write(
                    .error, "route \(route.name): the tus store \(tus.store) cannot be used: \(error)")
                local.local = UnavailableHandler(reason: "the upload store is unavailable")
            }
            return local
        }
        return ProxySettings(
            routes: RouteTable(routes), upstream: settings.upstream, limits: settings.limits,
            timeouts: settings.timeouts, underscoresInHeaders: settings.underscoresInHeaders,
            highWater: settings.highWater, lingerMilliseconds: settings.lingerMilliseconds)
    }

    /// What a tus route's deliveries run with: the delivery route alone, and no body limit
    /// but the upload's own (`max_size`).
    private static func deliverySettings(
        _ route: Route, _ tus: TusSettings, _ settings: ProxySettings, tickets: DeliveryTickets
    ) -> ProxySettings {
        var limits = settings.limits
        limits.bodyBytes = .max
        return ProxySettings(
            routes: RouteTable([TusDelivery.route(route, tus, tickets: tickets)]),
            upstream: settings.upstream,
            limits: limits, timeouts: settings.timeouts, underscoresInHeaders: settings.underscoresInHeaders,
            highWater: settings.highWater, lingerMilliseconds: settings.lingerMilliseconds)
    }

    /// Delivers the complete upload `info` of `handler`'s route, for the tus request
    /// `request` that completed it (its identity, client and id): see `TusDelivery`. `done`
    /// hears the outcome on the delivery's thread.
    func deliver(
        _ info: UploadInfo, handler: TusHandler, request: LocalRequest,
        _ done: @escaping @Sendable (DeliveryOutcome) -> Void
    ) {
        let form: DeliveryForm
        do throws(MultipartEncodingError) {
            form = try DeliveryForm(info, settings: handler.settings)
        } catch {
            return done(.failed(status: 500, reason: "the delivery's form could not be built"))
        }
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0
        else {
            return done(.failed(status: 503, reason: "no socket for the delivery"))
        }
        let socket: BufferedSocket
        do throws(EventLoopError) {
            socket = try BufferedSocket.accepted(base: base, fd: pair[0])
        } catch {
            close(pair[1])
            return done(.failed(status: 503, reason: "no socket for the delivery"))
        }
        let ticket = request.identity.map { deliveryTickets.issue($0) }
        let client = ClientConnection(
            socket: socket, peer: Self.peer(request.client), secure: request.secure, worker: self,
            settings: handler.deliverySettings)
        adopt(client)
        TusDeliveryClient(
            fd: pair[1],
            head: TusDelivery.head(form, settings: handler.settings, request: request, ticket: ticket),
            form: form, store: handler.service.store, id: info.id
        ).start(done)
    }

    /// The address a delivery's line logs and forwards (`X-Forwarded-For`): the client that
    /// completed the upload.
    private static func peer(_ client: [UInt8]) -> SocketAddress {
        let host = String(decoding: client, as: UTF8.self)
        let text = host.contains(":") ? "[\(host)]:0" : "\(host):0"
        if let address = try? SocketAddress(parsing: text) { return address }
        // Always parses.
        return try! SocketAddress(parsing: "127.0.0.1:0")
    }
}

/// A local route that cannot serve (its tus store could not be opened): 503 to everything.
final class UnavailableHandler: LocalHandler {
    let reason: String

    init(reason: String) {
        self.reason = reason
    }

    func responder(for request: LocalRequest) -> any LocalResponder {
        FixedResponder(
            answer: LocalAnswer(
                status: 503, headers: HeaderFields([("Content-Type", "text/plain; charset=utf-8")]),
                body: Array("503 Service Unavailable: \(reason)\n".utf8), error: reason))
    }
}

/// A responder whose answer is known at once (its request's body is read and dropped).
struct FixedResponder: LocalResponder {
    let answer: LocalAnswer?

    var room: Int { 0 }

    mutating func body(_ bytes: UnsafeRawBufferPointer, now: Int64) {}

    mutating func end(now: Int64) {}
}

extension Worker {
    /// How often the first worker looks for expired uploads.
    static let expiryInterval: Int64 = 60_000

    /// Deletes the uploads of every `tus:` store whose expiry passed (unless a PATCH writes
    /// them or a delivery reads them now): a scan on a store thread, then each deletion on its
    /// upload's thread. Counted as `expired` under the first route on the store.
    func expireUploads() {
        var seen: Set<String> = []
        for route in config.routes {
            guard let tus = route.tus, seen.insert(tus.store).inserted,
                let service = try? tusServices.service(tus, redis: config.redis)
            else { continue }
            service.expire(route: route.name, metrics: metrics)
        }
    }
}

extension TusService {
    /// See `Worker.expireUploads`.
    func expire(route: String, metrics: Metrics) {
        let now = TusHandler.unixSeconds()
        submit(UploadID.random()) { [self] in
            let expired: [UploadID]
            do throws(StoreError) {
                expired = try store.expired(at: now)
            } catch {
                return ErrorLog.shared.write(
                    .warn, "tus store \(directory): cannot scan for expired uploads: \(error)")
            }
            for id in expired {
                submit(id) { [self] in
                    guard !isBusy(id) else { return }
                    // Read again on the upload's own thread: a PATCH may have renewed it.
                    if let info = try? store.info(id), info.expiresAt > now { return }
                    do throws(StoreError) {
                        try store.delete(id)
                        forget(id)
                        metrics.tus(route: route, event: "expired", bytes: 0)
                    } catch {
                        ErrorLog.shared.write(
                            .warn, "tus store \(directory): cannot delete expired upload \(id): \(error)")
                    }
                }
            }
        }
    }
}
