/// What a class label may be, wherever one comes from (a dataset being trained on, a weights file being loaded):
/// one printable line that `classify` can print one answer a line with — 1–64 characters, no control, formatting
/// or line-separating character, no space at either end.
package enum LabelText {
    /// The longest label, in characters.
    package static let maximumCharacters = 64

    static let invisible: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned]

    /// Whether `text` is one printable line of 1…`maximumCharacters` characters without spaces at its ends (the
    /// rule for labels, and with its own length for a model's name).
    package static func isPrintableLine(_ text: String, maximumCharacters: Int = maximumCharacters) -> Bool {
        !text.isEmpty && text.count <= maximumCharacters && text == text.trimmingCharacters(in: .whitespaces)
            && text.unicodeScalars.allSatisfy { !invisible.contains($0.properties.generalCategory) }
    }

    /// Why `label` cannot be a label, with the label shown safely (its first 40 characters, invisible ones as `?`);
    /// `nil` when it can.
    package static func problem(_ label: String) -> String? {
        guard !isPrintableLine(label) else { return nil }
        let printable = label.unicodeScalars.allSatisfy { !invisible.contains($0.properties.generalCategory) }
        let shown = String(label.unicodeScalars.prefix(40).map { invisible.contains($0.properties.generalCategory) ? "?" : Character($0) })
        return "the label '\(shown)' is not one printable line of 1–\(maximumCharacters) characters without spaces at its ends"
            + (printable ? "" : " (control characters shown as ?)")
    }
}
