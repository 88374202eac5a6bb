import http from "k6/http";

export const options = {
  vus: 3,
  duration: "2s",
};

export default function () {
  http.get("http://127.0.0.1:18080/sleep/2");
}
