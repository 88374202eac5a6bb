from locust import FastHttpUser, LoadTestShape, constant_throughput, task


class Visitor(FastHttpUser):
    host = "http://127.0.0.1:18080"
    # Each user asks 20 times a second, so the request rate follows the user count.
    wait_time = constant_throughput(20)

    @task(4)
    def page(self):
        self.client.get("/sleep/5")

    @task(1)
    def flaky(self):
        self.client.get("/mixed")


class Ladder(LoadTestShape):
    """1, 2, then 3 users, 12 seconds each: longer than Locust's 10-second percentile window."""

    steps = [(12, 1), (24, 2), (36, 3)]

    def tick(self):
        run_time = self.get_run_time()
        for end, users in self.steps:
            if run_time < end:
                return users, 100
        return None
