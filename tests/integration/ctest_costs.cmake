# The longest integration cases' COST (seconds, from a quiet run of the whole suite), read by ctest
# after the cases catch_discover_tests found (tests/integration/CMakeLists.txt). ctest starts the
# costliest entries first; without COST it starts them in file order, and a 25 s case that starts
# last holds the run up while the other slots are idle. ctest's own record of past times
# (Testing/Temporary/CTestCostData.txt) cannot stand in: it splits lines at spaces, and every name
# here has spaces, so it keeps only "integration:a" and the like. A name that no longer exists is
# ignored; one that is new or renamed runs at cost 0, in file order, as before.
set_tests_properties("integration:a slowloris of 300 connections from one address leaves the admin listener's health and metrics answering within a second to another" PROPERTIES COST 25)
set_tests_properties("integration:the flush writes no link days of the open day, the upkeep closes the days that have ended, and a late bucket of a closed day is rolled up once, and the answers stay the same" PROPERTIES COST 12)
set_tests_properties("integration:/metrics reports the stored commissions per partner and status, amounts per currency" PROPERTIES COST 11)
set_tests_properties("integration:every stats answer reads the roll-ups and answers as the base table does, over a year, with unflushed clicks, moved and deleted links" PROPERTIES COST 8)
set_tests_properties("integration:the flush keeps no month sum of the current month, and months that have ended are closed into month sums by the upkeep, and the answers stay the same" PROPERTIES COST 8)
set_tests_properties("integration:the earnings answer matches the table computed by hand, per link, placement, partner and day" PROPERTIES COST 8)
set_tests_properties("integration:a scheduled code takes over on time while PostgreSQL is down, and is written after" PROPERTIES COST 8)
set_tests_properties("integration:a country database renamed over the configured file is used within seconds with no SIGHUP, and a broken one is refused once and the old one kept" PROPERTIES COST 8)
set_tests_properties("integration:a webhook failing for the give-up window is disabled, audited and counted" PROPERTIES COST 8)
set_tests_properties("integration:a real Prometheus scraping refgate sees exactly the clicks that were sent" PROPERTIES COST 7)
set_tests_properties("integration:redirects never fail while PostgreSQL is stopped under load, and the background flusher catches up exactly when it returns" PROPERTIES COST 7)
set_tests_properties("integration:a scheduled code emits partner.code_changed at its second, once" PROPERTIES COST 7)
set_tests_properties("integration:a scheduled code takes over at its second on every instance and in the history" PROPERTIES COST 6)
set_tests_properties("integration:the admin API answers 401 without a valid token, 403 for a low role, 429 when guessed" PROPERTIES COST 6)
set_tests_properties("integration:a change of channel_codes starts a new interval of the code history and is audited, and a scheduled switch of them takes over at its moment" PROPERTIES COST 6)
set_tests_properties("integration:click caps: three instances stop a capped link within the documented overshoot, and the API says so" PROPERTIES COST 6)
set_tests_properties("integration:two instances serving and flushing against one Redis and one database count exactly" PROPERTIES COST 5)
set_tests_properties("integration:an event committed but not delivered when the instance is killed is sent after the restart" PROPERTIES COST 5)
set_tests_properties("integration:a delivery answered 500 is retried within seconds, and later events wait for it" PROPERTIES COST 5)
set_tests_properties("integration:redirects never fail while Redis restarts under load, and every click reaches PostgreSQL" PROPERTIES COST 5)
set_tests_properties("integration:http protocol: with hundreds of connections on a thread, idle ones still answer their next request, one sent in pieces and two pipelined, and still close at the read timeout" PROPERTIES COST 5)
set_tests_properties("integration:the authorization matrix: every route x scope x restriction x expiry" PROPERTIES COST 4)
set_tests_properties("integration:refgate on a redis+sentinel URL counts every click once across SENTINEL FAILOVER" PROPERTIES COST 4)
set_tests_properties("integration:a flush killed between the counts and their roll-ups commits neither, and the roll-ups equal the counts after flushes, kills and a bucket Redis brings back" PROPERTIES COST 4)
set_tests_properties("integration:one instance of two checks on schedule, and a finding counts once a second check confirms it" PROPERTIES COST 4)
set_tests_properties("integration:a bucket that Redis brings back after it was flushed is skipped by the next flush" PROPERTIES COST 4)
set_tests_properties("integration:a flush killed before its commit applies nothing, and the next flush applies it all" PROPERTIES COST 4)
set_tests_properties("integration:a flush killed between two buckets loses nothing and applies nothing twice" PROPERTIES COST 4)
set_tests_properties("integration:a flush killed after its commit, before deleting the bucket from Redis, never applies it twice" PROPERTIES COST 4)
