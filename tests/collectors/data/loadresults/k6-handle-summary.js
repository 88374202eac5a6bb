import http from "k6/http";

export const options = {
  vus: 4,
  duration: "3s",
  summaryTrendStats: ["avg", "min", "med", "max", "p(75)", "p(90)", "p(95)", "p(99)"],
};

export default function () {
  http.get("http://127.0.0.1:18080/sleep/2");
}

export function handleSummary(data) {
  return { "k6-handle-summary.json": JSON.stringify(data) };
}
