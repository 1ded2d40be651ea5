/// What a model makes of its raw input before the network, as a weights file's `preprocessing` header names it:
/// the one table of the kinds this engine knows. Every place that depends on the kind switches on this enum, so a
/// new kind is a compile error wherever it needs a decision (before, the kind was a string compared in six places,
/// and whatever was not `raster` fell through to the motion branch).
package enum PreprocessingKind: String, Sendable, CaseIterable {
    /// Drawings rasterized into an image (`ShapeRasterizer`).
    case raster
    /// Recordings cut into windows of autocorrelation features (`MotionWindowing`).
    case motionAutocorrelation = "motion-autocorrelation"
    /// Drawings compared with a user's own drawings (`GestureTemplates`): each class's distance and the nearest's.
    case gestureTemplates = "gesture-templates"

    /// The kind a header's `preprocessing` names, or `nil` when it names none this build knows.
    package init?(_ preprocessing: [String: JSONValue]) {
        guard case .string(let name)? = preprocessing["kind"] else { return nil }
        self.init(rawValue: name)
    }

    /// The task whose recognizer takes this input: `shape` (drawings) or `motion` (recordings).
    package var task: RecognitionTask {
        switch self {
        case .raster, .gestureTemplates: .shape
        case .motionAutocorrelation: .motion
        }
    }

    /// The largest magnitude an input value can have: pixels lie in 0…1; autocorrelations in −1…1 and the log
    /// intensities between log 0.001 and the log of the largest float (88.7); template distances are clamped to 100.
    package var inputMagnitude: Double {
        switch self {
        case .raster: 1
        case .motionAutocorrelation: 89
        case .gestureTemplates: 100
        }
    }
}

extension ModelFile {
    /// The kind of the file's preprocessing, or `nil` when this build does not know it.
    package var preprocessingKind: PreprocessingKind? { PreprocessingKind(preprocessing) }
}
