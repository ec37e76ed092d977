import Testing

/// Tencent COS POST Object through FormGate to the verifying mock
/// (`Resources/cos_post_mock.py`): a client that sends no credentials uploads, and the object
/// read back is byte-exact under the templated key with the sniffed type (COS takes it from
/// the `Content-Type` field FormGate adds); a wrong secret, an expired key time, a key outside
/// the policy and a file over its length range are refused.
@Suite(.serialized) struct COSPostRoundTripTests {
    @Test(arguments: [1 << 20, 32 << 20])
    func bufferedUploadsRoundTrip(bytes: Int) throws {
        try PostObjectStore.cos.roundTrip(bytes: bytes, requestBody: "buffer")
    }

    /// Needs stream mode to send an exact Content-Length for a provider route: COS, like the
    /// mock, answers a chunked body with 411 MissingContentLength.
    @Test func streamedUploadRoundTrips() throws {
        try PostObjectStore.cos.roundTrip(bytes: 1 << 20, requestBody: "stream")
    }

    @Test func theSecurityTokenArrives() throws {
        try PostObjectStore.cos.carriesTheSecurityToken()
    }

    @Test func aWrongSecretIsRefused() throws {
        try PostObjectStore.cos.refusesAWrongSecret()
    }

    @Test func anExpiredKeyTimeIsRefused() throws {
        try PostObjectStore.cos.refusesAnExpiredPolicy()
    }

    @Test func aKeyOutsideThePolicyIsRefused() throws {
        try PostObjectStore.cos.refusesAKeyOutsideThePolicy()
    }

    @Test func aFileOverTheLengthRangeIsRefused() throws {
        try PostObjectStore.cos.refusesAFileOverTheLengthRange()
    }
}
