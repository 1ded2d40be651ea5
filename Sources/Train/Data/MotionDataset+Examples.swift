import DataFiles
import Datasets
import Foundation
import Models
import Tensor

extension MotionDataset {
    /// The class names: walking and running when the labels are among them, otherwise every label in order of
    /// first appearance.
    package static func classNames(for sessions: [LabeledSession]) -> [String] {
        Train.classNames(for: sessions.map(\.label), standard: standardLabels)
    }

    /// The sessions as examples: every window of every session (windows never cross sessions), grouped by
    /// session so splits keep a session's windows together.
    package static func examples(
        _ sessions: [LabeledSession], classNames: [String], windowing: MotionWindowing, file: String
    ) throws(DataError) -> Examples {
        var parts: [Tensor] = [], labels: [Int] = [], groups: [Int] = []
        for (index, session) in sessions.enumerated() {
            guard let label = classNames.firstIndex(of: session.label) else {
                throw DataError(
                    file: file, line: session.lines.lowerBound,
                    message: "session '\(session.id)' has label '\(session.label)', which the model does not know "
                        + "(it knows \(classNames.joined(separator: ", ")))")
            }
            let windows = Tensor.concatenate(session.segments.map(windowing.windows), axis: 0)
            parts.append(windows)
            labels += Array(repeating: label, count: windows.shape[0])
            groups += Array(repeating: index, count: windows.shape[0])
        }
        return Examples(inputs: Tensor.concatenate(parts, axis: 0), labels: labels, groups: groups, classNames: classNames)
    }
}
