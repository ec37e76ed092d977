import HTTPCore
import Testing

@testable import UploadRules

/// The request object template values share is refilled for a connection's next request only
/// when nothing else holds it (`TemplateRequest.reusing`, `forget`): values made from it earlier
/// keep reading their own request.
@Suite struct TemplateRequestReuseTests {
    @Test func aSpareNothingElseHoldsIsRefilled() {
        var spare: TemplateRequest? = TemplateRequest(headers: HeaderFields([("X-Tag", "old")]))
        let address = ObjectIdentifier(spare!)
        let fresh = TemplateRequest.reusing(&spare, headers: HeaderFields([("X-Tag", "new")]), identity: nil)
        #expect(ObjectIdentifier(fresh) == address)
        #expect(fresh.headers["X-Tag"] == "new")
        #expect(spare == nil)
    }

    @Test func aSpareStillHeldIsLeftAsItWas() {
        var values = TemplateValues()
        values.request = TemplateRequest(headers: HeaderFields([("X-Tag", "old")]))
        var spare: TemplateRequest? = values.request
        let fresh = TemplateRequest.reusing(&spare, headers: HeaderFields([("X-Tag", "new")]), identity: nil)
        #expect(ObjectIdentifier(fresh) != ObjectIdentifier(values.request))
        #expect(values.header("X-Tag") == "old")
        #expect(fresh.headers["X-Tag"] == "new")
    }

    @Test func forgettingEmptiesOnlyAnUnsharedSpare() {
        var spare: TemplateRequest? = TemplateRequest(headers: HeaderFields([("X-Tag", "old")]))
        TemplateRequest.forget(&spare)
        #expect(spare?.headers.count == 0)
        var values = TemplateValues()
        values.request = TemplateRequest(headers: HeaderFields([("X-Tag", "held")]))
        var shared: TemplateRequest? = values.request
        TemplateRequest.forget(&shared)
        #expect(shared == nil)
        #expect(values.header("X-Tag") == "held")
    }

    @Test func theSharedEmptyRequestIsNeverRefilled() {
        var spare: TemplateRequest? = TemplateRequest.none
        let fresh = TemplateRequest.reusing(&spare, headers: HeaderFields([("X-Tag", "new")]), identity: nil)
        #expect(ObjectIdentifier(fresh) != ObjectIdentifier(TemplateRequest.none))
        #expect(TemplateRequest.none.headers.count == 0)
    }
}
