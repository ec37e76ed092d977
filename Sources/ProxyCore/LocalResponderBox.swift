import HTTP1
import HTTPCore

/// The local part of an exchange whose route is answered inside FormGate: its responder, held
/// by reference (`Exchange.local`), so the exchange's inline storage stays small and a copy of
/// it is a retain. The responder is a value this part drives with the request's body.
final class LocalResponderBox {
    /// Where one round of feeding the body stopped.
    enum Step {
        /// The responder has its answer.
        case answered
        /// The body ended and the responder was told.
        case ended
        /// HTTP/2: the body is whole, but the stream has not ended yet.
        case awaitingEndStream
        /// The responder has no room, or the input nothing more for now.
        case waiting
        /// The body is malformed.
        case failed(ProxyError)
    }

    var responder: any LocalResponder

    init(_ responder: any LocalResponder) {
        self.responder = responder
    }

    /// Hands the responder what `input` holds of the body, as much as it has room for, until it
    /// answers, the body ends, or it can take nothing more. `counted` grows by the body bytes of
    /// every round that decoded cleanly.
    func feed(
        _ input: some ByteSource, decoder: inout BodyDecoder, awaitsEndStream: Bool, counted: inout Int64,
        now: Int64
    ) -> Step {
        while true {
            if responder.answer != nil { return .answered }
            if decoder.isComplete {
                if awaitsEndStream { return .awaitingEndStream }
                responder.end(now: now)
                return .ended
            }
            let room = min(responder.room, decoder.readable(input.count, awaitsEndStream: awaitsEndStream))
            guard room > 0 else { return .waiting }
            let before = decoder.payloadBytes
            do throws(HTTP1Error) {
                _ = try input.decodeBody(&decoder, limit: room) { responder.body($0, now: now) }
            } catch {
                return .failed(ProxyError(error))
            }
            counted += decoder.payloadBytes - before
            if decoder.payloadBytes == before, !decoder.isComplete { return .waiting }
        }
    }
}
