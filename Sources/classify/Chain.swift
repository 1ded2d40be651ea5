import Foundation
import ArgumentParser

/// One failed link of the chain: which model, and why.
struct Attempt: Encodable {
    let model: String
    let error: String
}

/// One link of the retry-with-fallback chain: a model's name and how to get its answer.
struct Link<Answer> {
    let name: String
    let run: () throws -> Answer
}

/// The first link's answer that succeeds, with the name of the link that gave it and every failed attempt before
/// it. Each failure is one `warning:` line on stderr naming the next link. When every link fails: one `error:`
/// line listing each attempt and its cause, and exit 70.
func firstAnswer<Answer>(_ links: [Link<Answer>]) throws -> (answer: Answer, model: String, attempts: [Attempt]) {
    var attempts: [Attempt] = []
    for (index, link) in links.enumerated() {
        do {
            return (try link.run(), link.name, attempts)
        } catch {
            let message = String(describing: error)
            attempts.append(Attempt(model: link.name, error: message))
            let next = index + 1 < links.count ? "trying \(links[index + 1].name)" : "no model left"
            reportWarning("\(link.name): \(message); \(next)")
        }
    }
    reportError("every model failed: " + attempts.map { "\($0.model): \($0.error)" }.joined(separator: "; "))
    throw ExitCode(ExitStatus.software)
}

/// The link's name for a weights file: its file name without `.weights`.
func modelName(ofWeights path: String) -> String {
    URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
}
