internal import CNghttp2

/// The budget of unproductive frames (`HTTP2Settings.unproductiveFrameBudget`): frames that
/// cost the session work and move no request or response on are charged as they begin;
/// frames that move one on earn the budget back.
///
/// libnghttp2 bounds the ACKs a flood makes it queue, so a client that reads them floods on;
/// it has no bound of its own for PRIORITY, WINDOW_UPDATE or empty DATA. (Frames of an unknown
/// type and frames on streams it has forgotten are skipped by libnghttp2 without a callback.)
extension HTTP2ServerSession {
    /// Charges a received frame that asks for work and moves nothing on; earns one back for
    /// DATA with bytes. Past the budget: GOAWAY ENHANCE_YOUR_CALM, and nothing more is read.
    func chargeFrameBudget(_ header: nghttp2_frame_hd) {
        let acknowledges = header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
        let endsStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(header.type) {
        case NGHTTP2_PING.rawValue, NGHTTP2_SETTINGS.rawValue:
            guard !acknowledges else { return }
        case NGHTTP2_PRIORITY.rawValue, NGHTTP2_WINDOW_UPDATE.rawValue:
            break
        case NGHTTP2_DATA.rawValue:
            guard header.length == 0, !endsStream else {
                if header.length > 0 { earnFrameBudget() }
                return
            }
        default:
            return
        }
        frameBudget -= 1
        if frameBudget < 0 {
            _ = nghttp2_session_terminate_session(session, HTTP2ErrorCode.enhanceYourCalm.rawValue)
        }
    }

    /// Earns one back for a response's HEADERS or DATA on its way to the client.
    func earnFrameBudget(sent header: nghttp2_frame_hd) {
        let type = UInt32(header.type)
        if type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue { earnFrameBudget() }
    }

    private func earnFrameBudget() {
        frameBudget = min(frameBudget + 1, settings.unproductiveFrameBudget)
    }
}
