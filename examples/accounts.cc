// Finding data by value and writing it safely: a small account directory
// on a durable graph.
//
// - A unique index on Account.email makes the email an external key: an
//   import can run twice (UpsertVertex finds the account or creates it), and
//   a second account with a taken email is refused with AlreadyExists.
// - An ordered index on Account.balance answers "the richest accounts"
//   without a scan.
// - A transfer is a read-modify-write: the batch carries expectations on the
//   balances it read (ExpectProperty). If another write changed one first,
//   the batch fails with Aborted, changes nothing, and is retried.
// - Indexes are part of the graph: after a reopen they answer at once.
//
// Run: build/release/examples/quiver_example_accounts [directory]
// Without an argument the graph lives in a new temporary directory, removed
// at the end. Exits 0 if every read returned what the example expects.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quiver/quiver.h"

namespace {

int failures = 0;

void Expect(bool ok, std::string_view what) {
  if (!ok) {
    std::fprintf(stderr, "UNEXPECTED: %.*s\n", static_cast<int>(what.size()), what.data());
    ++failures;
  }
}

struct Account {
  const char* email;
  const char* name;
  std::int64_t balance;
};

// One import run: every account upserted by its email. Running it again
// updates the accounts instead of adding duplicates.
quiver::Status Import(quiver::Graph& graph, const std::vector<Account>& accounts) {
  quiver::WriteBatch batch;
  for (const Account& a : accounts) {
    batch.UpsertVertex("Account", {{"email", a.email}}, {{"name", a.name}, {"balance", a.balance}});
  }
  return graph.Write(std::move(batch)).status();
}

std::int64_t BalanceOf(const quiver::Snapshot& snap, quiver::VertexId v) {
  std::optional<quiver::PropertyView> b = snap.GetProperty(v, "balance");
  return b ? b->as_int64().value_or(-1) : -1;
}

quiver::VertexId ByEmail(const quiver::Snapshot& snap, std::string_view email) {
  quiver::Result<std::optional<quiver::VertexId>> v = snap.FindVertex("Account", "email", std::string(email));
  if (!v.ok() || !v->has_value()) {
    Expect(false, "an imported account is found by its email");
    return quiver::VertexId(0);
  }
  return **v;
}

// Moves `amount` from one account to another, or fails with
// FailedPrecondition when `from` cannot pay. `before_write` runs between the
// read and the write: the example uses it to play a concurrent writer.
// Returns how many attempts the transfer took.
quiver::Result<int> Transfer(quiver::Graph& graph, quiver::VertexId from, quiver::VertexId to,
                             std::int64_t amount, const std::function<void()>& before_write) {
  for (int attempt = 1;; ++attempt) {
    quiver::Snapshot snap = graph.GetSnapshot();
    const std::int64_t from_balance = BalanceOf(snap, from);
    const std::int64_t to_balance = BalanceOf(snap, to);
    if (from_balance < amount) return quiver::FailedPreconditionError("insufficient funds");

    quiver::WriteBatch batch;
    batch.ExpectProperty(from, "balance", from_balance);  // unchanged since the read, or Aborted
    batch.ExpectProperty(to, "balance", to_balance);
    batch.SetProperty(from, "balance", from_balance - amount);
    batch.SetProperty(to, "balance", to_balance + amount);
    if (attempt == 1 && before_write) before_write();
    quiver::Result<quiver::CommitInfo> r = graph.Write(std::move(batch));
    if (r.ok()) return attempt;
    if (r.status().code() != quiver::StatusCode::kAborted || attempt == 5) return r.status();
    std::printf("transfer attempt %d aborted (%s): reading again\n", attempt, r.status().ToString().c_str());
  }
}

int Run(const std::string& dir) {
  quiver::Result<std::unique_ptr<quiver::Graph>> opened = quiver::Graph::Open(quiver::Options{}, dir);
  if (!opened.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), opened.status().ToString().c_str());
    return 1;
  }
  quiver::Graph& graph = **opened;

  // The indexes come first: UpsertVertex needs the unique one.
  Expect(graph
             .CreateIndex({.name = "account_email",
                           .label = "Account",
                           .keys = {"email"},
                           .kind = quiver::IndexKind::kUnique,
                           .type = quiver::ValueType::kString})
             .ok(),
         "create the unique email index");
  Expect(graph
             .CreateIndex({.name = "account_balance",
                           .label = "Account",
                           .keys = {"balance"},
                           .kind = quiver::IndexKind::kOrdered,
                           .type = quiver::ValueType::kInt64})
             .ok(),
         "create the ordered balance index");

  // The same import twice, the second with one balance changed: still three
  // accounts.
  std::vector<Account> accounts = {
      {"ada@example.org", "Ada", 120}, {"grace@example.org", "Grace", 300}, {"alan@example.org", "Alan", 40}};
  Expect(Import(graph, accounts).ok(), "first import");
  accounts[2].balance = 90;
  Expect(Import(graph, accounts).ok(), "second import");
  {
    quiver::Snapshot snap = graph.GetSnapshot();
    Expect(snap.CountVerticesInRange("Account", "balance", quiver::IndexRange{}).value_or(0) == 3,
           "three accounts after two imports");
    Expect(BalanceOf(snap, ByEmail(snap, "alan@example.org")) == 90, "the second import updated Alan");
  }

  // A second account with a taken email is refused, and nothing changes.
  {
    quiver::WriteBatch batch;
    batch.AddVertex("Account", {{"email", "ada@example.org"}, {"name", "Impostor"}, {"balance", 1000000}});
    quiver::Result<quiver::CommitInfo> r = graph.Write(std::move(batch));
    std::printf("adding a second ada@example.org: %s\n", r.status().ToString().c_str());
    Expect(r.status().code() == quiver::StatusCode::kAlreadyExists,
           "a duplicate email fails with AlreadyExists");
  }

  // A transfer whose first attempt loses a race with another writer.
  {
    quiver::Snapshot snap = graph.GetSnapshot();
    const quiver::VertexId ada = ByEmail(snap, "ada@example.org");
    const quiver::VertexId grace = ByEmail(snap, "grace@example.org");
    auto interest = [&] {  // another writer credits Ada after the transfer read her balance
      quiver::WriteBatch b;
      b.SetProperty(ada, "balance", BalanceOf(graph.GetSnapshot(), ada) + 5);
      Expect(graph.Write(std::move(b)).ok(), "the concurrent credit commits");
    };
    quiver::Result<int> attempts = Transfer(graph, grace, ada, 100, interest);
    Expect(attempts.ok() && *attempts == 2, "the transfer commits on its second attempt");
    quiver::Snapshot after = graph.GetSnapshot();
    Expect(BalanceOf(after, ada) == 225 && BalanceOf(after, grace) == 200,
           "the transfer and the credit both hold (Ada 120 + 5 + 100, Grace 300 - 100)");
    Expect(Transfer(graph, ByEmail(after, "alan@example.org"), ada, 1000, {}).status().code() ==
               quiver::StatusCode::kFailedPrecondition,
           "a transfer Alan cannot pay is refused");
  }

  // The two richest accounts, through the ordered index.
  auto richest = [&](const quiver::Snapshot& snap) {
    std::vector<std::string> names;
    quiver::IndexRange top{.descending = true, .limit = 2};
    for (quiver::VertexId v :
         snap.VerticesInRange("Account", "balance", top).value_or(std::vector<quiver::VertexId>{})) {
      std::optional<quiver::PropertyView> name = snap.GetProperty(v, "name");
      names.emplace_back(name ? name->as_string().value_or("?") : "?");
      std::printf("  %s: %" PRId64 "\n", names.back().c_str(), BalanceOf(snap, v));
    }
    return names;
  };
  std::printf("the two richest accounts:\n");
  Expect(richest(graph.GetSnapshot()) == std::vector<std::string>{"Ada", "Grace"}, "Ada, then Grace");

  // Close and reopen: the indexes are there, ready, with the same answers.
  Expect(graph.Close().ok(), "close");
  opened = quiver::Graph::Open(quiver::Options{}, dir);
  if (!opened.ok()) {
    std::fprintf(stderr, "reopen %s: %s\n", dir.c_str(), opened.status().ToString().c_str());
    return 1;
  }
  quiver::Snapshot reopened = (*opened)->GetSnapshot();
  std::size_t ready = 0;
  for (const quiver::IndexInfo& info : reopened.Indexes()) ready += info.state == quiver::IndexState::kReady;
  Expect(ready == 2, "both indexes are ready after the reopen");
  std::printf("after the reopen:\n");
  Expect(richest(reopened) == std::vector<std::string>{"Ada", "Grace"}, "the same answer after the reopen");
  Expect((*opened)->Close().ok(), "close after the reopen");

  if (failures > 0) std::fprintf(stderr, "%d unexpected results\n", failures);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) return Run(argv[1]);
  std::string pattern = (std::filesystem::temp_directory_path() / "quiver-accounts-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  const int rc = Run(pattern + "/graph");
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
  return rc;
}
